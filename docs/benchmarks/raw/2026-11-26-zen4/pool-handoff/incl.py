# incl.py TAG THREAD US_PER_CALL [N]: the N frames with most inclusive samples on threads whose name starts
# with THREAD, in srv-TAG.collapsed(.gz), scaled so that the thread's whole share is US_PER_CALL.
import collections, gzip, os, sys
tag, thr, us = sys.argv[1], sys.argv[2], float(sys.argv[3]); N = int(sys.argv[4]) if len(sys.argv) > 4 else 40
path = f'srv-{tag}.collapsed'
f = open(path) if os.path.exists(path) else gzip.open(path + '.gz', 'rt')
inc = collections.Counter(); tot = 0
for line in f:
    st, n = line.rstrip().rsplit(' ', 1); n = int(n)
    fr = st.split(';')
    if not fr[0].startswith('[' + thr): continue
    tot += n
    for x in set(fr[1:]): inc[x] += n
print(tag, thr, 'samples', tot)
for k, n in inc.most_common(N): print(f'{us*n/tot:5.2f} {100*n/tot:5.1f}% {k[:150]}')
