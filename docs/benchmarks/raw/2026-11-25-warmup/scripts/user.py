import sys,collections
# user-mode (non-kernel leaf) samples, grouped by the deepest frame matching a prefix list
f=sys.argv[1]; calls=float(sys.argv[2])
tot=0; user=0; c=collections.Counter(); leaf=collections.Counter()
for line in open(f):
    stack,cnt=line.rstrip().rsplit(' ',1); cnt=int(cnt); tot+=cnt
    fr=stack.split(';')
    if fr[-1].endswith('_[k]'): continue
    user+=cnt
    leaf[fr[-1][:90]]+=cnt
    key='?'
    for x in fr:
        if x.startswith('io/petrel') or x.startswith('com/google/protobuf') or 'BenchmarkMessage' in x:
            key=x.split('(')[0][:90]; break
    c[key]+=cnt
print(f'total {tot} user {user}  user us/call {user*1000/calls:.2f} total us/call {tot*1000/calls:.2f}')
for k,v in c.most_common(25): print(f'{v*1000/calls:6.3f} us  {k}')
print('-- leaves')
for k,v in leaf.most_common(30): print(f'{v*1000/calls:6.3f} us  {k}')
