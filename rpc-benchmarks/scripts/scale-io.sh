#!/usr/bin/env bash
# NIO beside epoll: the same run with Netty's epoll transport and with its NIO one, on the client and on the
# server it starts (the benchmark's io parameter sets both).
#
#   rpc-benchmarks/scripts/scale-io.sh [common options] [-v MODES] [-c CALLERS] [-p PAYLOAD]
#
#   -v MODES    I/O modes, comma-separated (default epoll,nio; also io_uring; epoll and io_uring need Linux, and
#               gRPC-java, whose shaded Netty has no io_uring, runs on epoll in the io_uring trials)
#   -c CALLERS  blocking callers (default 16), on one connection
#   -p PAYLOAD  the payload (default MESSAGE)
#
# One trial per framework and mode; with the defaults 4 x 2 = 8 runs of 48 s.
set -euo pipefail
. "$(dirname "$0")/scale-common.sh"
MODES=epoll,nio
CALLERS=16
PAYLOAD=MESSAGE
scale_opt() {
  case "$1" in
    v) MODES=$2 ;;
    c) CALLERS=$2 ;;
    p) PAYLOAD=$2 ;;
  esac
}
scale_parse "v:c:p:" "$@"
scale_plan $(( $(count "$FRAMEWORKS") * $(count "$MODES") ))
# shellcheck disable=SC2046
run_jar "$JAVA" SyncCallBenchmark -p "framework=$FRAMEWORKS" -p "payload=$PAYLOAD" -p "io=$MODES" -t "$CALLERS" \
  $(jmh_timing) -rff "$OUT/io.json" "${EXTRA[@]}" || FAILED=1
scale_report "NIO beside epoll ($CALLERS blocking callers, one connection)" "$OUT/io.json"
exit "$FAILED"
