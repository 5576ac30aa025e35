#!/bin/bash
# ab.sh ROUNDS tag=JAR ...: rounds of the jars in turn; per round and jar, BenchmarkMessage over one connection,
# blocking callers, -wi 5 -w 5 -i 2 -r 5: Petrel pool and direct at 16 callers, Petrel pool at 1 caller.
cd "$(dirname "$0")"
R=$1; shift
for r in $(seq 1 $R); do
  for pair in "$@"; do
    tag=${pair%%=*}; jar=${pair#*=}
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 16 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL,PETREL_DIRECT -rf json -rff $tag$r-t16.json > $tag$r-t16.log 2>&1
    java -Djmh.ignoreLock=true -jar $jar SyncCallBenchmark -p payload=MESSAGE -t 1 -wi 5 -w 5 -i 2 -r 5 -f 1 \
      -bm thrpt -p framework=PETREL -rf json -rff $tag$r-t1.json > $tag$r-t1.log 2>&1
    echo "$(date -u +%T) $tag $r" >> progress.txt
  done
done
