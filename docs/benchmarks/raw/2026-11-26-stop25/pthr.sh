#!/bin/bash
# pstat.sh JAR TAG FW [T] [EXTRA_SERVER_JVM_ARGS]: server syscalls/context switches over 8 s of the measurement
JAR=$1; TAG=$2; FW=$3; T=${4:-16}; SJ=${5:-}
java -Xms1g -Xmx1g $SJ -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7600 --bind 127.0.0.1 --frameworks petrel,petrel_direct,netty > srvs-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srvs-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 3 -r 8 -f 1 -bm thrpt > clis-$TAG.log 2>&1 &
JP=$!
sleep 27
perf stat --per-thread -e context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_write -p $SP -- sleep 8 2> perf-$TAG.txt
wait $JP
kill $SP; wait $SP 2>/dev/null
thr=$(grep -E "^SyncCallBenchmark.call +" clis-$TAG.log | awk "{print \$(NF-3)}")
echo "$TAG thrpt=$thr"
python3 - "$thr" perf-$TAG.txt <<'PY'
import sys,re
thr=float(sys.argv[1].replace(',','')); calls=thr*8
for l in open(sys.argv[2]):
    m=re.match(r'\s*([\d,]+)\s+(\S+)',l)
    if m and not l.strip().startswith('#'):
        try: n=int(m.group(1).replace(',',''))
        except: continue
        print(f'  {m.group(2):35s} {n/calls:.3f}/call')
PY
