#!/bin/bash
# The eighth round's set: rounds of (before, after) interleaved; per jar and round, the docs' report warm-up
# (-wi 5 -w 5 -i 3 -r 5): 16 callers (PETREL, PETREL_DIRECT, GRPC, NETTY), then 128 and 1 caller
# (PETREL_DIRECT, NETTY). usage: run.sh ROUNDS tag=jar ...
cd "$(dirname "$0")"
R=$1; shift
run() { # tag jar threads frameworks round
  java -Djmh.ignoreLock=true -jar $2 SyncCallBenchmark -p payload=MESSAGE -t $3 -wi 5 -w 5 -i 3 -r 5 -f 1 -bm thrpt \
    -p framework=$4 -rf json -rff $1$5-t$3.json > $1$5-t$3.log 2>&1
}
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    run $tag $jar 16 PETREL,PETREL_DIRECT,GRPC,NETTY $r
    run $tag $jar 128 PETREL_DIRECT,NETTY $r
    run $tag $jar 1 PETREL_DIRECT,NETTY $r
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
