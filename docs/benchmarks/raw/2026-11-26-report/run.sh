#!/bin/bash
# The report run of 2026-11-26 (evening): the 2026-11-23 report run's commands on main's jar, with nothing else
# running. usage: run.sh JAR   (writes the JMH JSON and logs here, then the Report tool's tables and charts
# into ./report; copy report/* to docs/benchmarks/ to publish them)
cd "$(dirname "$0")"
JAR=$1
COMMON="-wi 5 -w 5 -i 3 -r 5 -f 1 -bm thrpt -rf json"
j() { java -Djmh.ignoreLock=true -jar "$JAR" "$@"; }
step() { echo "$(date -u +%T) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> progress.txt; }
step start
for r in 1 2 3; do
  j SyncCallBenchmark -p payload=MESSAGE --threads 1,16,128 $COMMON -rff sync-message-run$r.json > sync-message-run$r.log 2>&1
  step sync-message-run$r
done
for r in 4 5; do
  j SyncCallBenchmark -p payload=MESSAGE --threads 16,128 $COMMON -rff sync-message-run$r.json > sync-message-run$r.log 2>&1
  step sync-message-run$r
done
j AsyncCallBenchmark -p payload=MESSAGE -p window=1000,5000 -p rate=0 -p "serverArgs=--business-queue 8192" \
  $COMMON -rff async-message.json > async-message.log 2>&1
step async-message
j AsyncCallBenchmark -p payload=MESSAGE -p window=1000 -p rate=20000 $COMMON -rff async-message-paced.json \
  > async-message-paced.log 2>&1
step async-message-paced
j SyncCallBenchmark -p payload=MESSAGE --threads 64,256 $COMMON -rff sync-message-64-256.json > sync-message-64-256.log 2>&1
step sync-message-64-256
j SyncCallBenchmark -p payload=EMPTY,BYTES_4,BYTES_1K --threads 16 $COMMON -rff sync-payloads-16.json \
  > sync-payloads-16.log 2>&1
step sync-payloads-16
mkdir -p report
java -cp "$JAR" io.petrel.rpc.benchmarks.Report sync-message-run1.json sync-message-run2.json sync-message-run3.json \
  sync-message-run4.json sync-message-run5.json sync-message-64-256.json async-message.json \
  async-message-paced.json sync-payloads-16.json --out report > report.log 2>&1
step done
