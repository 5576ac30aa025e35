#!/bin/bash
# Large bodies, before and after the frame decoder gathers large bodies in a buffer of their own: rounds of
# (before, after) interleaved; Petrel pool and direct, opaque bodies of 16 KiB to 1 MiB, 16 blocking callers,
# one connection, -wi 5 -w 5 -i 3 -r 5 (the payload table's timing).
# usage: run.sh ROUNDS tag=jar ...
cd "$(dirname "$0")"
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=BYTES_16K,BYTES_64K,BYTES_256K,BYTES_1M -t 16 \
      -wi 5 -w 5 -i 3 -r 5 -f 1 -bm thrpt -p framework=PETREL,PETREL_DIRECT -rf json -rff $tag$r.json > $tag$r.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
