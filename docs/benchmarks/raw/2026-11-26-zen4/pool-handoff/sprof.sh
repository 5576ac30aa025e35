#!/bin/bash
# sprof.sh JAR TAG FW: server profiled (itimer 1ms, collapsed, threads) for the whole run
JAR=$1; TAG=$2; FW=$3; T=${4:-16}
java -Xms1g -Xmx1g -agentpath:/tmp/ap/linux-x64/libasyncProfiler.so=start,event=itimer,interval=1000000,threads,collapsed,file=/tmp/s30/srv-$TAG.collapsed \
  -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7600 --bind 127.0.0.1 --frameworks petrel,petrel_direct > srv-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srv-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 2 -r 8 -f 1 -bm thrpt > cli-$TAG.log 2>&1
kill $SP; wait $SP 2>/dev/null
grep -E "thrpt|server.cpu" cli-$TAG.log | grep -v "^#" | tail -4
