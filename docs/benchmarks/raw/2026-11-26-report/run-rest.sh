#!/bin/bash
# The rest of run.sh, run after the profiles (run.sh was stopped before it to free the machine): 64 and 256
# callers, and the three small payloads at 16 callers. usage: run-rest.sh JAR
cd "$(dirname "$0")"
JAR=$1
COMMON="-wi 5 -w 5 -i 3 -r 5 -f 1 -bm thrpt -rf json"
j() { java -Djmh.ignoreLock=true -jar "$JAR" "$@"; }
step() { echo "$(date -u +%T) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >> progress.txt; }
j SyncCallBenchmark -p payload=MESSAGE --threads 64,256 $COMMON -rff sync-message-64-256.json > sync-message-64-256.log 2>&1
step sync-message-64-256
j SyncCallBenchmark -p payload=EMPTY,BYTES_4,BYTES_1K --threads 16 $COMMON -rff sync-payloads-16.json \
  > sync-payloads-16.log 2>&1
step sync-payloads-16
