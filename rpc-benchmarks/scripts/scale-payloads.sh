#!/usr/bin/env bash
# Payloads from 4 B to 1 MiB: calls/s and MB/s of each framework, opaque bodies echoed unchanged (the payload
# scale table of docs/benchmarks.md, "How cost grows with the work").
#
#   rpc-benchmarks/scripts/scale-payloads.sh [common options] [-v PAYLOADS] [-c CALLERS]
#
#   -v PAYLOADS  Payload names, comma-separated (default BYTES_4,BYTES_64,BYTES_1K,BYTES_16K,BYTES_64K,
#                BYTES_256K,BYTES_1M; also EMPTY and MESSAGE)
#   -c CALLERS   blocking callers (default 16), on one connection
#
# One trial per framework and payload (SyncCallBenchmark); with the defaults 4 x 7 = 28 runs of 48 s.
set -euo pipefail
. "$(dirname "$0")/scale-common.sh"
PAYLOADS=BYTES_4,BYTES_64,BYTES_1K,BYTES_16K,BYTES_64K,BYTES_256K,BYTES_1M
CALLERS=16
scale_opt() {
  case "$1" in
    v) PAYLOADS=$2 ;;
    c) CALLERS=$2 ;;
  esac
}
scale_parse "v:c:" "$@"
scale_plan $(( $(count "$FRAMEWORKS") * $(count "$PAYLOADS") ))
# shellcheck disable=SC2046
run_jar "$JAVA" SyncCallBenchmark -p "framework=$FRAMEWORKS" -p "payload=$PAYLOADS" -t "$CALLERS" \
  $(jmh_timing) -rff "$OUT/payloads.json" "${EXTRA[@]}" || FAILED=1
scale_report "Payloads from 4 B to 1 MiB ($CALLERS blocking callers, one connection)" "$OUT/payloads.json"
exit "$FAILED"
