# cats.py FILE.gz US_PER_CALL: the client's samples by activity, in us per call
import sys,gzip,collections
f,us=sys.argv[1],float(sys.argv[2])
rules=[('sleep (futex wait)','__futex_abstimed_wait'),('wake (cond_signal, futex wake)','pthread_cond_signal'),('wake (cond_signal, futex wake)','__lll_lock_wake'),
 ('socket write','writev'),('socket write','__GI___send'),('socket read','recv'),('epoll','epoll_pwait'),
 ('protobuf decode','ProtobufMarshaller.read'),('protobuf encode','FrameEncoder.encodeMessage'),('protobuf encode','ProtobufMarshaller.write'),
 ('call bookkeeping (caller)','ClientChannel'),('call bookkeeping (caller)','ClientCall'),('wake chain','WakeChain'),('benchmark harness','SyncCallBenchmark'),('event loop (other)','SingleThreadIoEventLoop'),('JIT/GC','Compiler'),('JIT/GC','GC Thread')]
c=collections.Counter(); tot=0
for line in gzip.open(f,'rt'):
    st,n=line.rstrip().rsplit(' ',1); n=int(n); tot+=n
    fr=st.split(';'); leaf=';'.join(fr[-6:])
    k='other'
    for name,kw in rules:
        if kw in leaf: k=name; break
    else:
        for name,kw in rules[7:]:
            if kw in st: k=name; break
    c[k]+=n
for k,n in c.most_common(): print(f'{k:34s} {100*n/tot:5.1f}% {us*n/tot:5.2f} us')
