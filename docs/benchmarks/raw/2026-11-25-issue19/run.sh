#!/bin/bash
# Issue 19's hot-path check: rounds of (before, after) interleaved; per jar and round, 16 blocking callers over one
# connection, BenchmarkMessage, the report's warm-up (-wi 5 -w 5 -i 3 -r 5), the four frameworks whose ratios
# the issue names (Petrel pool, Petrel direct, gRPC-java default, raw Netty echo).
# usage: run.sh ROUNDS tag=jar ...
cd "$(dirname "$0")"
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 3 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT,GRPC,NETTY -rf json -rff $tag$r-t16.json > $tag$r-t16.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
