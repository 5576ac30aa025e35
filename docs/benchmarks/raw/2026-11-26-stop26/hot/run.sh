#!/bin/bash
# The goal ratios at 16 callers (issues 20, 21, 22), this stop: rounds of one jar; BenchmarkMessage over one
# connection, blocking callers, -wi 5 -w 5 (25 s warm-up) -i 2 -r 5, the four frameworks the goals name.
# usage: run.sh ROUNDS tag=jar
cd "$(dirname "$0")"
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT,GRPC,NETTY -rf json -rff $tag$r-t16.json > $tag$r-t16.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
