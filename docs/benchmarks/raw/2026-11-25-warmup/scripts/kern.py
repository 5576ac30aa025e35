import sys,collections
f=sys.argv[1]; calls=float(sys.argv[2])
c=collections.Counter()
for line in open(f):
    stack,cnt=line.rstrip().rsplit(' ',1); cnt=int(cnt)
    fr=stack.split(';')
    if not fr[-1].endswith('_[k]'): continue
    # find first kernel frame after the userspace
    i=next(j for j,x in enumerate(fr) if x.endswith('_[k]'))
    user=[x for x in fr[:i] if not x.startswith('[')][-2:]
    k=fr[i:i+4]
    sysc=[x for x in fr[i:] if x.startswith('__x64_sys') or x.startswith('asm_') or x.startswith('exit_to_user') or x.startswith('irqentry')]
    key=(sysc[0] if sysc else fr[i]) + ' <- ' + (user[-1].split('/')[-1][:40] if user else '')
    c[key]+=cnt
for k,v in c.most_common(25): print(f'{v*1000/calls:6.3f} us  {k}')
