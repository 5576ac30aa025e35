import collections,gzip,sys
# budget.py COLLAPSED US_PER_CALL : per-call CPU by activity, for all threads of the profiled JVM
f,us=sys.argv[1],float(sys.argv[2])
cats=[('waiting (park, epoll_wait)',['LockSupport.park','epollWait','epoll_wait']),
      ('waking others (unpark, eventfd write)',['unpark','eventFdWrite','WakeChain.propagate']),
      ('socket writes',['writevAddresses','sendAddress','writeAddress']),
      ('socket reads',['recvAddress','readAddress']),
      ('protobuf encode/decode',['com/google/protobuf','benchmarks/proto/']),
      ('benchmark harness (latency histograms)',['HdrHistogram']),
      ('JIT, GC, VM',['CompilerThre','GC Thread','VM Thread','VM Periodic','GN Service']),
]
c=collections.Counter(); tot=0
for line in (gzip.open(f,'rt') if f.endswith('.gz') else open(f)):
    st,n=line.rstrip().rsplit(' ',1); n=int(n); tot+=n
    fr=st.split(';'); hit='rest: '+('callers' if 'jmh-worker' in fr[0] else 'event loops' if ('epoll' in fr[0] or 'worker' in fr[0] or 'netty-client' in fr[0]) else 'other threads')
    for name,keys in cats:
        if any(any(k in x for x in fr) for k in keys): hit=name;break
    c[hit]+=n
for name,_ in cats+[('rest: callers',0),('rest: event loops',0),('rest: other threads',0)]:
    print(f'{us*c[name]/tot:5.2f} us  {name}')
