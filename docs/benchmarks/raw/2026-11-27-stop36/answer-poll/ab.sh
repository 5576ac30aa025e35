#!/bin/bash
# A/B of the answer poll: same jar, server JVM with -Dpetrel.answerPollNanos=0 (off) or N
R=$1; J=$2; shift 2
for r in $(seq 1 $R); do
  for ns in "$@"; do
    java -Djmh.ignoreLock=true -jar $J SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL -p serverJvmArgs="-Xms1g -Xmx1g -Dpetrel.answerPollNanos=$ns" \
      -rf json -rff p$ns-$r.json > p$ns-$r.log 2>&1
    echo "$(date -u +%T) $ns $r $(grep -E '^SyncCallBenchmark' p$ns-$r.log | head -3 | tr -s ' ')" >> progress.txt
  done
done
