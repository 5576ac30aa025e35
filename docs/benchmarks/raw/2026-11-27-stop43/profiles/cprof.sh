#!/bin/bash
# cprof.sh JAR TAG FW [T]: server = BenchmarkServer on 7600; client JMH fork profiled by async-profiler (cpu, collapsed, threads)
# AP: the directory of tools.profiler:async-profiler:4.1 unpacked; cats.py and tree.py read the collapsed stacks (gzipped)
JAR=$1; TAG=$2; FW=$3; T=${4:-16}; AP=${AP:-/tmp/ap}
java -Xms1g -Xmx1g -cp $JAR io.petrel.rpc.benchmarks.BenchmarkServer --port 7600 --bind 127.0.0.1 --frameworks petrel,petrel_direct,grpc,netty > srvc-$TAG.log 2>&1 &
SP=$!
for i in $(seq 1 60); do grep -q -i "listening\|ready\|serving" srvc-$TAG.log && break; sleep 0.5; done
timeout 300 java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=$FW -t $T -wi 3 -w 5 -i 2 -r 8 -f 1 -bm thrpt \
  -prof "async:libPath=$AP/linux-x64/libasyncProfiler.so;output=collapsed;event=itimer;interval=1000000;threads=true;dir=$(pwd)/cp-$TAG" > clic-$TAG.log 2>&1
kill $SP; wait $SP 2>/dev/null
grep -E "thrpt|client.cpu|server.cpu" clic-$TAG.log | grep -v "^#" | tail -6
