#!/bin/bash
# A/B: rounds, then tag=jar pairs
cd /tmp/bench4/set2
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 2 -w 3 -i 3 -r 3 -f 1 -bm thrpt -rf json \
      -p framework=PETREL_DIRECT,NETTY -rff ab-$tag-$r-t16.json > ab-$tag-$r-t16.log 2>&1
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 2 -w 3 -i 3 -r 3 -f 1 -bm thrpt -rf json \
      -p framework=PETREL_DIRECT,NETTY -rff ab-$tag-$r-t1.json > ab-$tag-$r-t1.log 2>&1
    echo "$(date +%T) $tag $r" >> ab-progress.txt
  done
done
