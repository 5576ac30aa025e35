#!/usr/bin/env python3
"""Share of a server profile's samples (async-profiler collapsed, with threads) by thread kind and activity."""
import sys, collections
f = sys.argv[1]
tot = 0; c = collections.Counter(); det = collections.Counter()
for line in open(f):
    stack, n = line.rstrip().rsplit(' ', 1); n = int(n); tot += n
    fr = stack.split(';')
    th = fr[0]
    kind = 'business' if 'business' in th else 'eventloop' if ('worker' in th or 'epoll' in th.lower() or 'nio' in th.lower()) else 'other'
    s = stack
    if kind == 'business':
        if 'signalWork' in s or ('unpark' in s and 'WriteQueue' not in s and 'SingleThreadEventExecutor' not in s and 'execute' not in s.split('unpark')[0][-200:]):
            act = 'wake another business thread'
        elif 'LockSupport.park' in s or 'LockSupport;park' in s or '/park' in s:
            act = 'park'
        elif 'eventfd' in s or 'wakeup' in s:
            act = 'wake event loop (eventfd)'
        elif 'com/google/protobuf' in s or 'Messages' in s or 'EchoService' in s or 'BenchmarkMessage' in s:
            act = 'protobuf+handler'
        elif 'BusinessPool$Worker.work' in s and 'runCall' not in s and 'awaitSignal' not in s:
            act = 'search queue (spin)'
        else:
            act = 'other'
    elif kind == 'eventloop':
        if 'epoll_wait' in s or 'epollWait' in s:
            act = 'epoll_wait'
        elif 'unpark' in s or 'signalWork' in s:
            act = 'wake business thread'
        elif 'WriteQueue' in s or 'flush' in s or 'writev' in s or 'doWrite' in s:
            act = 'write'
        elif 'channelRead' in s or 'FrameDecoder' in s or 'doReadBytes' in s or 'epollInReady' in s:
            act = 'read+dispatch'
        else:
            act = 'other'
    else:
        act = th[:30]
    c[(kind, act)] += n
print(f'{tot} samples')
for (k, a), n in c.most_common(20):
    print(f'{k:9s} {a:32s} {100*n/tot:5.1f}%')
