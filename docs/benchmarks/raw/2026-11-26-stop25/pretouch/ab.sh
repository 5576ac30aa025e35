#!/bin/bash
# One caller, BenchmarkMessage: the benchmark server's JVM as by default (-Xms1g -Xmx1g) against the same with
# -XX:+AlwaysPreTouch; rounds interleaved; Petrel pool, Petrel direct and the raw Netty echo
cd "$(dirname "$0")"
R=$1; JAR=$2
for r in $(seq 1 $R); do
  for v in def pt; do
    if [ $v = pt ]; then A="-Xms1g -Xmx1g -XX:+AlwaysPreTouch"; else A="-Xms1g -Xmx1g"; fi
    java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 5 -w 5 -i 2 -r 5 -f 1 -bm thrpt \
      -p framework=PETREL,PETREL_DIRECT,NETTY -p "serverJvmArgs=$A" -rf json -rff ab-$v$r.json > ab-$v$r.log 2>&1
    echo "$(date -u +%T) $v $r $(cat /proc/loadavg)" >> progress.txt
  done
done
