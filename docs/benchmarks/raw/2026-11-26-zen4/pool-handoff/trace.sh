#!/bin/bash
JAR=$1; TAG=$2; FW=$3; T=${4:-16}
java -Xms1g -Xmx1g -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7600 --bind 127.0.0.1 --frameworks petrel,petrel_direct,netty > srvt-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srvt-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 1 -r 20 -f 1 -bm thrpt > clit-$TAG.log 2>&1 &
CP=$!
sleep 24
perf trace -s -p $SP -o trace-$TAG.txt -- sleep 5
wait $CP
kill $SP; wait $SP 2>/dev/null
grep -E "call +|server.cpu" clit-$TAG.log | grep -v "^#" | tail -3
