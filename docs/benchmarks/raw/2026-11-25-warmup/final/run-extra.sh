#!/bin/bash
# After run.sh: two servers behind one client (three runs) and the in-process benchmark, after jar only.
cd "$(dirname "$0")"; A=$1
for i in 1 2 3; do
  java -Djmh.ignoreLock=true -jar $A MultiServerBenchmark -t 16 -wi 5 -w 5 -i 3 -r 5 -f 1 -rf json -rff multi$i.json > multi$i.log 2>&1
done
grep -h "multi-server split" multi*.log | grep "Iteration   3" > multi-split.txt
java -Djmh.ignoreLock=true -jar $A InProcessBenchmark -wi 4 -w 2 -i 5 -r 2 -f 3 -rf json -rff inprocess.json > inprocess.log 2>&1
echo "$(date -u +%T) extra done" >> progress.txt
