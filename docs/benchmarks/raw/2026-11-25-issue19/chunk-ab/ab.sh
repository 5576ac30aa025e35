#!/bin/bash
# Pool-mode A/B: PETREL and GRPC at 16 callers, rounds interleaved. usage: ab.sh ROUNDS tag=jar ...
cd "$(dirname "$0")/.."
mkdir -p chunk-ab; cd chunk-ab
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 3 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,GRPC -rf json -rff $tag$r.json > $tag$r.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
