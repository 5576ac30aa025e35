import gzip,collections,sys
f,us=sys.argv[1],float(sys.argv[2]); N=int(sys.argv[3]) if len(sys.argv)>3 else 20
c=collections.Counter(); tot=0
for line in gzip.open(f,'rt'):
    st,n=line.rstrip().rsplit(' ',1); n=int(n); tot+=n
    fr=st.split(';'); leaf=None
    for x in reversed(fr):
        if ('/' in x or '.' in x) and not x.endswith('_[k]') and not x.startswith('['):
            leaf=x;break
    c[leaf]+=n
for k,n in c.most_common(N): print(f'{us*n/tot:5.2f} us {100*n/tot:5.1f}% {k}')
