#!/bin/bash
# usage: ab2.sh ROUNDS tag=jar ...   (16 and 1 caller, PETREL_DIRECT vs NETTY), the docs' report warm-up
cd "$(dirname "$0")"
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    for t in 16 1; do
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t $t -wi 5 -w 5 -i 3 -r 5 -f 1 -bm thrpt -rf json \
      -p framework=PETREL_DIRECT,NETTY -rff ab-$tag-$r-t$t.json > ab-$tag-$r-t$t.log 2>&1
    done
    echo "$(date +%T) $tag $r" >> ab-progress.txt
  done
done
