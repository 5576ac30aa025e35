# tree.py FILE.gz US_PER_CALL FRAME [DEPTH]: the stacks under the first frame containing FRAME, in us per call
import sys,gzip,collections
f,us,root=sys.argv[1],float(sys.argv[2]),sys.argv[3]; depth=int(sys.argv[4]) if len(sys.argv)>4 else 3
tot=0; c=collections.Counter()
for line in gzip.open(f,'rt'):
    st,n=line.rstrip().rsplit(' ',1); n=int(n); tot+=n
    fr=st.split(';')
    idx=[i for i,x in enumerate(fr) if root in x]
    if not idx: continue
    i=idx[0]
    path=tuple(fr[i+1:i+1+depth])
    for d in range(1,len(path)+1): c[path[:d]]+=n
    c[()]+=n
def show(p,ind):
    kids=[(k,n) for k,n in c.items() if len(k)==len(p)+1 and k[:len(p)]==p]
    for k,n in sorted(kids,key=lambda x:-x[1]):
        if us*n/tot<0.03: continue
        print(f'{"  "*ind}{us*n/tot:6.3f} {k[-1][:120]}')
        show(k,ind+1)
print(f'{us*c[()]/tot:6.3f} {root}'); show((),1)
