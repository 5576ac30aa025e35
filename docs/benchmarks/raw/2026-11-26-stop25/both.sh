#!/bin/bash
# both.sh JAR TAG FW T: per-thread context switches, futex and socket syscalls of server and client over 8 s
JAR=$1; TAG=$2; FW=$3; T=${4:-16}
java -Xms1g -Xmx1g ${SJ:-} -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7600 --bind 127.0.0.1 --frameworks petrel,petrel_direct,netty > srvb-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srvb-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 3 -r 8 -f 1 -bm thrpt > clib-$TAG.log 2>&1 &
JP=$!
sleep 27
CP=$(pgrep -f "jmh.runner.ForkedMain" | head -1)
E=page-faults,task-clock,context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_pwait2
perf stat --per-thread -e $E -p $SP -- sleep 8 2> bs-$TAG.txt &
PP=$!
perf stat --per-thread -e $E -p $CP -- sleep 8 2> bc-$TAG.txt
wait $PP
wait $JP
kill $SP; wait $SP 2>/dev/null
thr=$(grep -E "^SyncCallBenchmark.call +" clib-$TAG.log | awk '{print $(NF-3)}')
python3 - "$thr" $TAG <<'PY'
import sys,re,collections
thr=float(sys.argv[1].replace(',','')); calls=thr*8; tag=sys.argv[2]
print(f'{tag}: {thr:.0f} calls/s')
for side in ('bs','bc'):
    agg=collections.defaultdict(lambda: collections.Counter())
    for l in open(f'{side}-{tag}.txt'):
        m=re.match(r'\s*(\S+?)-(\d+)\s+([\d,]+)\s+(\S+)',l)
        if not m: continue
        name=m.group(1); n=int(m.group(3).replace(',','')); ev=m.group(4).replace('syscalls:sys_enter_','')
        if 'jmh-worker' in name or 'SyncCallBenc' in name: name='callers'
        agg[name][ev]+=n
    print(' ', 'server' if side=='bs' else 'client')
    for name,c in sorted(agg.items(), key=lambda x:-x[1]['context-switches']):
        if c['context-switches']<calls*0.005: continue
        print('   ', f'{name:18s}', ' '.join(f'{k}={v/calls:.2f}' for k,v in c.items() if v>calls*0.005))
PY
