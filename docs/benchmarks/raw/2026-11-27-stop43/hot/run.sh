#!/bin/bash
# The hot-path check: rounds of (before, after) interleaved; per jar and round, BenchmarkMessage over one
# connection, blocking callers, -wi 5 -w 5 (25 s warm-up) -i 2 -r 5: at 16 callers the four frameworks whose
# ratios the issues name (Petrel pool, Petrel direct, gRPC-java default, raw Netty echo), at 128 callers Petrel
# pool, Petrel direct and the echo.
# usage: run.sh ROUNDS tag=jar ...
cd "$(dirname "$0")"
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT,GRPC,NETTY -rf json -rff $tag$r-t16.json > $tag$r-t16.log 2>&1
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 128 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT,NETTY -rf json -rff $tag$r-t128.json > $tag$r-t128.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
