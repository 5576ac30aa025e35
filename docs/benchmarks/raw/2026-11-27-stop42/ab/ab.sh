#!/bin/bash
# ab.sh ROUNDS BEFORE_JAR AFTER_JAR: interleaved rounds, 16 blocking callers, BenchmarkMessage, one connection
cd "$(dirname "$0")"
R=$1; B=$2; A=$3
for r in $(seq 1 $R); do
  for pair in before=$B after=$A; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT,NETTY -rf json -rff $tag$r.json > $tag$r.log 2>&1
    echo "$(date -u +%T) $tag $r $(grep -E '^SyncCallBenchmark' $tag$r.log | tr -s ' ' | cut -d' ' -f2,6,7 | tr '\n' ';')" >> progress.txt
  done
done
