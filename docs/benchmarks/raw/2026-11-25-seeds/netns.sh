#!/usr/bin/env bash
# The Tars seed from two client "machines" (network namespaces) at once against one server (a third), merged
# into one table: docs/benchmarks.md, "Two client machines on one host". Run as root from the project root.
set -euo pipefail
OUT=docs/benchmarks/raw/2026-11-25-seeds/netns
rpc-benchmarks/scripts/netns-clients.sh -s tars -o "$OUT" -l 600 -- --procs-threads 1x10,2x10 \
  --payloads BYTES_4,BYTES_1K --warmup 10 --duration 10
