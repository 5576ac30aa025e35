#!/bin/bash
# ab.sh ROUNDS: interleaved before (0b8a7b9's jar) / after (the call's place freed before its answer), 16 callers
cd "$(dirname "$0")"
for r in $(seq 1 $1); do
  for pair in before=/work/jars/uring.jar after=/work/jars/release.jar; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT -rf json -rff $tag$r-t16.json > $tag$r-t16.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
