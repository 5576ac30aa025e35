#!/bin/bash
# prof.sh JAR TAG [FRAMEWORK] [THREADS]: a BenchmarkServer of JAR (petrel, petrel_direct) on control port 7600
# with async-profiler (AP: the directory of tools.profiler:async-profiler:4.1's jar, unpacked) attached for 8 s
# in the middle of the measurement (event=itimer, 1 ms, per thread); the JMH client of JAR at 16 callers.
JAR=$1; TAG=$2; FW=${3:-PETREL}; T=${4:-16}; AP=${AP:-/tmp/ap}
OUT=${OUT:-$(pwd)}
cd "$OUT"
java -Xms1g -Xmx1g -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7600 --bind 127.0.0.1 --frameworks petrel,petrel_direct,netty > srv-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srv-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 3 -r 8 -f 1 -bm thrpt > cli-$TAG.log 2>&1 &
JP=$!
sleep 27
jcmd $SP JVMTI.agent_load $AP/linux-x64/libasyncProfiler.so '"start,event=itimer,interval=1ms,threads"' > /dev/null 2>&1
sleep 8
jcmd $SP JVMTI.agent_load $AP/linux-x64/libasyncProfiler.so "\"stop,file=$OUT/srv-$TAG.collapsed,collapsed\"" > /dev/null 2>&1
wait $JP
kill $SP; wait $SP 2>/dev/null
grep -E "^Iteration|thrpt|server.cpu" cli-$TAG.log | tail -8
