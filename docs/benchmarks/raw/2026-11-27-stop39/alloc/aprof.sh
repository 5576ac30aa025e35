#!/bin/bash
JAR=$1; TAG=$2; FW=$3; AP=/tmp/pool2/ap
java -Xms1g -Xmx1g -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7601 --bind 127.0.0.1 --frameworks petrel,petrel_direct,grpc,netty > srv-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srv-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7601 -p payload=MESSAGE -p framework=$FW -t 16 -wi 3 -w 5 -i 1 -r 8 -f 1 -bm thrpt \
  -prof "async:libPath=$AP/linux-x64/libasyncProfiler.so;output=collapsed;event=alloc;dir=/tmp/alloc39/ap-$TAG" > cli-$TAG.log 2>&1
kill $SP; wait $SP 2>/dev/null
grep -E "thrpt" cli-$TAG.log | grep -v "^#" | head -3
