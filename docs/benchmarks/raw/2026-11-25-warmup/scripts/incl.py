import sys,collections
f=sys.argv[1]; calls=float(sys.argv[2]); pats=sys.argv[3:]
c=collections.Counter(); cu=collections.Counter()
for line in open(f):
    stack,cnt=line.rstrip().rsplit(' ',1); cnt=int(cnt)
    fr=stack.split(';'); isuser=not fr[-1].endswith('_[k]')
    for p in pats:
        if any(p in x for x in fr):
            c[p]+=cnt
            if isuser: cu[p]+=cnt
for p in pats: print(f'{c[p]*1000/calls:6.3f} us (user {cu[p]*1000/calls:6.3f})  {p}')
