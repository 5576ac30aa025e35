import sys, collections
f=sys.argv[1]; thr=sys.argv[2]
c=collections.Counter(); tot=0
rules=[('park','LockSupport.park'),('unpark','LockSupport.unpark'),('eventfd/wakeup','wakeup'),('proto encode','writeTo'),('proto decode','parseFrom'),('proto decode','ProtoBuffers.decode'),('epoll_wait','epollWait'),('epoll_wait','epoll_wait'),('socket write','writev'),('socket write','sendto'),('socket write','doWrite'),('socket read','recvfrom'),('socket read','doReadBytes'),('read pipeline','channelRead'),('read pipeline','fireChannelRead'),('tasks','runAllTasks'),('tasks','runTasks')]
for line in open(f):
    st,n=line.rstrip().rsplit(' ',1); n=int(n)
    fr=st.split(';')
    if thr not in fr[0]: continue
    tot+=n
    k='other'
    for name,kw in rules:
        if kw in st: k=name; break
    c[k]+=n
print(tot)
for k,n in c.most_common(): print(f'{n:6d} {100*n/tot:5.1f}% {k}')
