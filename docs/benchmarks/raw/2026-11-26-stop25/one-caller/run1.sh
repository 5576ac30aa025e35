#!/bin/bash
# One caller, BenchmarkMessage, one connection: Petrel pool, Petrel direct and the raw Netty echo, -wi 5 -w 5 -i 2 -r 5, R rounds
cd "$(dirname "$0")"
R=$1; JAR=$2
for r in $(seq 1 $R); do
  java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 5 -w 5 -i 2 -r 5 -f 1 \
    -bm thrpt -p framework=PETREL,PETREL_DIRECT,NETTY -rf json -rff t1-$r.json > t1-$r.log 2>&1
  echo "$(date -u +%T) $r $(cat /proc/loadavg)" >> progress.txt
done
