#!/bin/bash
# run.sh ROUNDS JAR: one caller, Petrel pool, Petrel direct, echo; default heap vs AlwaysPreTouch on client fork and server
R=$1; J=$2
for r in $(seq 1 $R); do
  java -Djmh.ignoreLock=true -jar $J SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 5 -w 5 -i 2 -r 5 -f 1 -bm thrpt \
    -p framework=PETREL,PETREL_DIRECT,NETTY -rf json -rff def$r.json > def$r.log 2>&1
  java -Djmh.ignoreLock=true -jar $J SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 5 -w 5 -i 2 -r 5 -f 1 -bm thrpt \
    -p framework=PETREL,PETREL_DIRECT,NETTY -jvmArgsAppend "-Xms1g -Xmx1g -XX:+AlwaysPreTouch" \
    -p "serverJvmArgs=-Xms1g -Xmx1g -XX:+AlwaysPreTouch" -rf json -rff pt$r.json > pt$r.log 2>&1
  echo "$(date -u +%T) round $r" >> progress.txt
done
