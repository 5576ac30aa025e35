#!/bin/bash
# Large bodies, before and after the frame decoder gathers large frames in buffers of their own: rounds of
# (before, after) interleaved; 16 blocking callers, one connection, -wi 5 -w 5 -i 3 -r 5 (the payload table's
# timing).
# usage: run.sh ROUNDS PAYLOADS FRAMEWORKS tag=jar ...
#   the first two forms (v1-always, v2-when-held): run.sh 2 BYTES_16K,BYTES_64K,BYTES_256K,BYTES_1M PETREL,PETREL_DIRECT ...
#   the last (this folder's JSON):                  run.sh 4 BYTES_16K,BYTES_256K,BYTES_1M PETREL ...
cd "$(dirname "$0")"
R=$1; PAYLOADS=$2; FRAMEWORKS=$3; shift 3
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=$PAYLOADS -t 16 \
      -wi 5 -w 5 -i 3 -r 5 -f 1 -bm thrpt -p framework=$FRAMEWORKS -rf json -rff $tag$r.json > $tag$r.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
