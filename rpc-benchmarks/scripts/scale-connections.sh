#!/usr/bin/env bash
# Connections from one client JVM: 1, 2, 8 and 100, shared by all its blocking callers (the connection
# scale table of docs/benchmarks.md, "How cost grows with the work").
#
#   rpc-benchmarks/scripts/scale-connections.sh [common options] [-v COUNTS] [-c CALLERS] [-p PAYLOAD]
#
#   -v COUNTS   connections, comma-separated (default 1,2,8,100)
#   -c CALLERS  blocking callers (default 128: every one of 100 connections has a call to carry)
#   -p PAYLOAD  the payload (default MESSAGE)
#
# One trial per framework and count; with the defaults 4 x 4 = 16 runs of 48 s.
set -euo pipefail
. "$(dirname "$0")/scale-common.sh"
COUNTS=1,2,8,100
CALLERS=128
PAYLOAD=MESSAGE
scale_opt() {
  case "$1" in
    v) COUNTS=$2 ;;
    c) CALLERS=$2 ;;
    p) PAYLOAD=$2 ;;
  esac
}
scale_parse "v:c:p:" "$@"
scale_plan $(( $(count "$FRAMEWORKS") * $(count "$COUNTS") ))
# shellcheck disable=SC2046
run_jar "$JAVA" SyncCallBenchmark -p "framework=$FRAMEWORKS" -p "payload=$PAYLOAD" -p "connections=$COUNTS" \
  -t "$CALLERS" $(jmh_timing) -rff "$OUT/connections.json" "${EXTRA[@]}" || FAILED=1
scale_report "Connections from one client ($CALLERS blocking callers)" "$OUT/connections.json"
exit "$FAILED"
