#!/usr/bin/env bash
# The seed workloads as measured for docs/benchmarks.md ("Current results: the seeds"), one run each, from the
# project root with the jar built from this commit. Each writes its printed output (*.md) and its raw results
# (*.json); the load average of the host is noted before and after each.
set -euo pipefail
JAR=${JAR:-rpc-benchmarks/target/benchmarks.jar}
OUT=${OUT:-docs/benchmarks/raw/2026-11-26-seeds}
run() { # run NAME ARGS...
  local name=$1
  shift
  echo "== $name: java -jar benchmarks.jar seed $* (load before: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$OUT/loadavg.txt"
  java -jar "$JAR" seed "$@" --json "$OUT/$name.json" > "$OUT/$name.md" 2> "$OUT/$name.err" || echo "$name failed: $?" | tee -a "$OUT/loadavg.txt"
  echo "   $name done $(date -u +%H:%M:%S) (load after: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$OUT/loadavg.txt"
}
run tars tars --procs-threads 1x1,1x10,2x10,5x10 --payloads BYTES_4,BYTES_1K --warmup 10 --duration 10
run tarantool tarantool --objects 1000,10000,100000,1000000 --callers 1,2,4,8
run hetu hetu --callers 16 --players 1000 --warmup 10 --duration 10
run rpcx rpcx --frameworks petrel,grpc --concurrency 100,1000,2000,5000 --warmup 15 --duration 10
run trpc trpc --connections 100 --modes sync,async --first-warmup 15 --warmup 3 --duration 5 --bisect 3
