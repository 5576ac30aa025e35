#!/bin/bash
# Interleaved before/after runs of the project's own harness (SyncCallBenchmark, BenchmarkMessage, 1 connection),
# five of each; then MultiServerBenchmark three times on the after jar.
cd /tmp/bench4
B=/tmp/bench/before-3e43f6b.jar
A=$(ls /tmp/bench/now-*.jar | head -1)
J="java -Djmh.ignoreLock=true -jar"
run() { # tag jar
  local tag=$1 jar=$2
  echo "$(date +%T) start $tag" >> progress.txt
  $J $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 3 -w 4 -i 3 -r 4 -f 1 -bm thrpt -rf json \
    -p framework=PETREL,PETREL_DIRECT,GRPC,NETTY -rff $tag-t16.json > $tag-t16.log 2>&1
  $J $jar SyncCallBenchmark -p payload=MESSAGE -t 128 -wi 3 -w 3 -i 3 -r 3 -f 1 -bm thrpt -rf json \
    -p framework=PETREL_DIRECT,NETTY -rff $tag-t128.json > $tag-t128.log 2>&1
  $J $jar SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 3 -w 3 -i 3 -r 3 -f 1 -bm thrpt -rf json \
    -p framework=PETREL_DIRECT,NETTY -rff $tag-t1.json > $tag-t1.log 2>&1
  echo "$(date +%T) end $tag" >> progress.txt
}
for i in 1 2 3 4 5; do
  run after$i $A
  run before$i $B
done
echo "$(date +%T) start multi" >> progress.txt
for i in 1 2 3; do
  $J $A MultiServerBenchmark -t 16 -wi 3 -w 4 -i 3 -r 4 -f 1 -rf json -rff multi$i.json > multi$i.log 2>&1
done
echo "$(date +%T) all done" >> progress.txt
