#!/bin/bash
# usage: run.sh OUTDIR ROUNDS THREADS tag=jar ...   (rounds of the jars interleaved)
out=$1; R=$2; T=$3; shift 3
mkdir -p $out
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    echo "$(date -u +%T) start $tag $r load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/progress.txt
    timeout 900 java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t $T -wi 5 -w 5 -i 3 -r 5 -f 1 \
      -bm thrpt -p framework=${FW:-PETREL,PETREL_DIRECT,GRPC,NETTY} -rf json -rff $out/$tag$r-t$T.json > $out/$tag$r-t$T.log 2>&1
    echo "$(date -u +%T) end $tag $r load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/progress.txt
  done
done
