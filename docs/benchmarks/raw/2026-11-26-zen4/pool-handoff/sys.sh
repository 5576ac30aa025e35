#!/bin/bash
# usage: sys.sh FRAMEWORK tag
fw=$1; tag=$2
java -Djmh.ignoreLock=true -jar /work/jars/fd02a3f.jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 3 -w 5 -i 1 -r 20 -f 0 \
  -bm thrpt -p framework=$fw > $tag.log 2>&1 &
jp=$!
sleep 22
pids=$(pgrep java | tr '\n' ',' | sed 's/,$//')
perf stat -e raw_syscalls:sys_enter,context-switches,task-clock --per-thread -p $pids -o $tag.perf -- sleep 10
wait $jp
