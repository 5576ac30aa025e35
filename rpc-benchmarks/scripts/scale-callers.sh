#!/usr/bin/env bash
# Callers from 1 to 5000, blocking (SyncCallBenchmark, one thread per caller) and pipelined (AsyncCallBenchmark,
# a window of that many calls in flight), each framework on one connection, the servers on their defaults
# (Petrel's business pool: its threads and its queue of 2048; the benchmark server's Petrel allows 65536 calls in
# flight per connection). A call refused by a limit is counted in the table's cell, and the run goes on.
#
#   rpc-benchmarks/scripts/scale-callers.sh [common options] [-v COUNTS] [-p PAYLOAD] [-m MODES]
#
#   -v COUNTS   callers (blocking) and windows (pipelined), comma-separated (default 1,16,128,256,1024,5000)
#   -p PAYLOAD  the payload (default MESSAGE, the rpcx BenchmarkMessage)
#   -m MODES    sync, async or sync,async (default)
#
# One trial per framework, count and mode; with the defaults 4 x 6 x 2 = 48 runs of 48 s.
set -euo pipefail
. "$(dirname "$0")/scale-common.sh"
COUNTS=1,16,128,256,1024,5000
PAYLOAD=MESSAGE
MODES=sync,async
scale_opt() {
  case "$1" in
    v) COUNTS=$2 ;;
    p) PAYLOAD=$2 ;;
    m) MODES=$2 ;;
  esac
}
scale_parse "v:p:m:" "$@"
case "$MODES" in sync|async|sync,async|async,sync) ;; *) echo "-m: sync, async or sync,async: $MODES" >&2; exit 2 ;; esac
scale_plan $(( $(count "$FRAMEWORKS") * $(count "$COUNTS") * $(count "$MODES") ))
FILES=()
if [[ $MODES == *sync* && $MODES != async ]]; then
  # shellcheck disable=SC2046
  run_jar "$JAVA" SyncCallBenchmark -p "framework=$FRAMEWORKS" -p "payload=$PAYLOAD" --threads "$COUNTS" \
    $(jmh_timing) -rff "$OUT/callers-sync.json" "${EXTRA[@]}" || FAILED=1
  FILES+=("$OUT/callers-sync.json")
fi
if [[ $MODES == *async* ]]; then
  # shellcheck disable=SC2046
  run_jar "$JAVA" AsyncCallBenchmark -p "framework=$FRAMEWORKS" -p "payload=$PAYLOAD" -p "window=$COUNTS" \
    $(jmh_timing) -rff "$OUT/callers-async.json" "${EXTRA[@]}" || FAILED=1
  FILES+=("$OUT/callers-async.json")
fi
scale_report "Callers from 1 to 5000 (blocking and pipelined, one connection)" "${FILES[@]}"
exit "$FAILED"
