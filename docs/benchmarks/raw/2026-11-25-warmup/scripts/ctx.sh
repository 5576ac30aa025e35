#!/bin/bash
# ctx.sh FRAMEWORK THREADS : context switches per call (client JVM, server JVM) over 5 s mid-run against server on 7600
FW=$1; T=$2; JAR=${JAR:-/tmp/bench/before.jar}
SP=$(jps -l | grep BenchmarkServer | awk '{print $1}')
cd /tmp/bench
java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 4 -r 5 -f 1 -bm thrpt > ctx-$FW-$T.log 2>&1 &
JP=$!
sleep 22
CP=$(jps -l | grep -i ForkedMain | head -1 | awk '{print $1}')
snap() { for p in $1; do cat /proc/$p/task/*/status 2>/dev/null | awk '/^voluntary/ {v+=$2} /^nonvoluntary/ {n+=$2} END {print v, n}'; done; }
c0=$(snap $CP); s0=$(snap $SP); t0=$(date +%s.%N)
sleep 5
c1=$(snap $CP); s1=$(snap $SP); t1=$(date +%s.%N)
wait $JP
tp=$(grep -E "^Iteration   2" ctx-$FW-$T.log | awk '{print $3}')
python3 -c "
c0='$c0'.split();c1='$c1'.split();s0='$s0'.split();s1='$s1'.split();dt=$t1-$t0;tp=float('$tp')
n=tp*dt
print('$FW t=$T tput %.0f  client vol/call %.2f invol/call %.2f  server vol/call %.2f invol/call %.2f'%(tp,(int(c1[0])-int(c0[0]))/n,(int(c1[1])-int(c0[1]))/n,(int(s1[0])-int(s0[0]))/n,(int(s1[1])-int(s0[1]))/n))
"
