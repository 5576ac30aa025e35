#!/bin/bash
# A/B of the business pool's quick-call window: rounds of (base, fast=0, fast=0 + at most 2 active, echo), 16 callers.
cd "$(dirname "$0")"
R=$1; JAR=$2
run() { # tag framework jvmargs
  java -Djmh.ignoreLock=true -jar $JAR SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
    -bm thrpt -p framework=$2 -p serverJvmArgs="$3" -rf json -rff $1.json > $1.log 2>&1
}
for r in $(seq 1 $R); do
  run base$r PETREL "-Xms1g -Xmx1g"
  run f0$r PETREL "-Xms1g -Xmx1g -Dexp.fastCallMicros=0"
  run f0a2$r PETREL "-Xms1g -Xmx1g -Dexp.fastCallMicros=0 -Dexp.maxActive=2"
  run echo$r NETTY "-Xms1g -Xmx1g"
  echo "$(date -u +%T) round $r" >> progress.txt
done
