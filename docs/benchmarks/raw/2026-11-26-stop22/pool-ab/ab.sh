#!/bin/bash
# ab.sh ROUNDS THREADS FRAMEWORKS tag=jar ... : interleaved A/B, SyncCallBenchmark MESSAGE, -wi 5 -w 5 -i 2 -r 5
cd "$(dirname "$0")"
R=$1; T=$2; FW=$3; shift 3
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; rest=${pair#*=}; jar=${rest%%|*}; sargs=""; [[ "$rest" == *"|"* ]] && sargs=${rest#*|}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t $T -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=$FW ${sargs:+-p "serverJvmArgs=-Xms1g -Xmx1g $sargs"} -rf json -rff $tag$r-t$T.json > $tag$r-t$T.log 2>&1
    echo "$(date -u +%T) $tag $r t$T" >> progress.txt
  done
done
