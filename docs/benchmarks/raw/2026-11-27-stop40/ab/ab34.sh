#!/bin/bash
cd /tmp/ab40
B=/work/jars/f20d097.jar; A=/work/jars/f99e2d2.jar
for r in 3 4; do
  for pair in before=$B after=$A; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT,NETTY -rf json -rff $tag$r.json > $tag$r.log 2>&1
  done
done
