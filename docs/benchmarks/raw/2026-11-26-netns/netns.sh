#!/usr/bin/env bash
# The Tars seed from two client "machines" (network namespaces) at once against one server (a third), merged
# into one table: docs/benchmarks.md, "Two client machines". Run as root from the project root; JAR: the
# benchmark jar (this run: the jar of 0e7e590, 2026-11-26 10:45 UTC, nothing else running).
set -euo pipefail
OUT=docs/benchmarks/raw/2026-11-26-netns
rpc-benchmarks/scripts/netns-clients.sh -j "${JAR:-rpc-benchmarks/target/benchmarks.jar}" -s tars -o "$OUT" -l 600 \
  -- --procs-threads 1x10,2x10 --payloads BYTES_4,BYTES_1K --warmup 10 --duration 10
