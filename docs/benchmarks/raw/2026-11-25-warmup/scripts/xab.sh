#!/bin/bash
# xab.sh ROUNDS THREADS tag=jar ... : client jars alternated against the warm external server on 7600 (PETREL_DIRECT then NETTY)
cd /tmp/bench; mkdir -p x; R=$1; T=$2; shift 2
for r in $(seq 1 $R); do for pair in "$@"; do tag=${pair%%=*}; jar=${pair#*=}
  java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p host=127.0.0.1 -p port=7600 -p payload=MESSAGE -p framework=PETREL_DIRECT,NETTY -t $T -wi 3 -w 4 -i 3 -r 4 -f 1 -bm thrpt -rf json -rff x/ab-$tag-$r-t$T.json > x/ab-$tag-$r-t$T.log 2>&1
done; done
