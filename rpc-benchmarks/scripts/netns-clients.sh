#!/usr/bin/env bash
# Two client "machines" against one server, on one Linux host: the benchmark server runs in one network
# namespace, each client in a namespace of its own, joined to the server's by a veth pair (its own link and
# addresses), so that each client's traffic crosses an interface whose kernel counters it reads. Both clients
# run the same seed workload at once; their --json results are merged into one table.
#
#   sudo rpc-benchmarks/scripts/netns-clients.sh [-j JAR] [-o OUTDIR] [-l SECONDS] [-s SEED] [-- SEED OPTIONS...]
#
#   -j JAR      the benchmark jar (default rpc-benchmarks/target/benchmarks.jar)
#   -o OUTDIR   where the server log, each client's output and JSON, and the merged table go (default a new
#               directory under /tmp)
#   -l SECONDS  the longest any process may run (server, each client); past it, it is killed (default 900)
#   -s SEED     the workload both clients run: tars (default) or rpcx
#   SEED OPTIONS  passed to both clients, e.g. -- --procs-threads 1x10,2x10 --duration 10
#
# Needs root (ip netns), iproute2, coreutils' timeout and a Java 17+ on the PATH. Every namespace (and with it
# every veth) this script made is removed when it exits, also on failure or Ctrl-C. Addresses: server
# 10.213.1.1 and 10.213.2.1, clients 10.213.1.2 and 10.213.2.2 (/30 links), nothing routed anywhere else.
set -euo pipefail

JAR=rpc-benchmarks/target/benchmarks.jar
OUT=
LIMIT=900
SEED=tars
while getopts "j:o:l:s:h" opt; do
  case "$opt" in
    j) JAR=$OPTARG ;;
    o) OUT=$OPTARG ;;
    l) LIMIT=$OPTARG ;;
    s) SEED=$OPTARG ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
case "$SEED" in tars|rpcx) ;; *) echo "-s: tars or rpcx, not $SEED" >&2; exit 2 ;; esac
[[ "$LIMIT" =~ ^[0-9]+$ ]] && (( LIMIT > 0 && LIMIT <= 7200 )) || { echo "-l: 1 to 7200 seconds: $LIMIT" >&2; exit 2; }
[[ -f "$JAR" ]] || { echo "no benchmark jar at $JAR: give its path with -j, or build it from the repository root:" \
  "./mvnw -B -q package -pl rpc-benchmarks -am -DskipTests" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "needs root for ip netns" >&2; exit 2; }
JAR=$(readlink -f "$JAR")
OUT=${OUT:-$(mktemp -d /tmp/petrel-netns-XXXXXX)}
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")

ID=$(( $$ % 100000 ))
SRV=pb$ID-srv
C1=pb$ID-c1
C2=pb$ID-c2
NAMESPACES=()

cleanup() {
  local rc=$?
  for ns in "${NAMESPACES[@]}"; do
    # Everything still running in the namespace goes first (by its pids, none of anyone else's).
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  done
  sleep 1
  for ns in "${NAMESPACES[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  local left
  left=$(ip netns list | grep -c "^pb$ID-" || true)
  echo "netns-clients: removed namespaces ${NAMESPACES[*]:-none} (left: $left); output in $OUT" >&2
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for ns in $SRV $C1 $C2; do
  ip netns add "$ns"
  NAMESPACES+=("$ns")
  ip -n "$ns" link set lo up
done
link() { # link N CLIENT_NS: veth pair server <-> client, 10.213.N.1 <-> 10.213.N.2
  local n=$1 ns=$2
  ip link add "pb$ID-s$n" type veth peer name "pb$ID-c$n"
  ip link set "pb$ID-s$n" netns "$SRV"
  ip link set "pb$ID-c$n" netns "$ns"
  ip -n "$SRV" addr add "10.213.$n.1/30" dev "pb$ID-s$n"
  ip -n "$ns" addr add "10.213.$n.2/30" dev "pb$ID-c$n"
  ip -n "$SRV" link set "pb$ID-s$n" up
  ip -n "$ns" link set "pb$ID-c$n" up
}
link 1 "$C1"
link 2 "$C2"

echo "netns-clients: server in $SRV (10.213.1.1, 10.213.2.1), clients in $C1 (10.213.1.2) and $C2 (10.213.2.2)"
ip netns exec "$SRV" timeout -k 10 "$LIMIT" java -Xms1g -Xmx1g -cp "$JAR" io.petrel.rpc.benchmarks.BenchmarkServer \
  --bind 0.0.0.0 --port 7000 --frameworks petrel,petrel_direct,grpc,grpc_direct,netty --business-queue 10000 \
  > "$OUT/server.log" 2>&1 &
for _ in $(seq 1 120); do
  grep -q "petrel-benchmark-server ready" "$OUT/server.log" && break
  kill -0 $! 2>/dev/null || { echo "the server exited:" >&2; cat "$OUT/server.log" >&2; exit 1; }
  sleep 0.5
done
grep -q "petrel-benchmark-server ready" "$OUT/server.log" || { echo "the server did not start in 60 s" >&2; exit 1; }

client() { # client N NS: the seed workload against the server's address on link N
  local n=$1 ns=$2
  shift 2
  ip netns exec "$ns" timeout -k 10 "$LIMIT" java -jar "$JAR" seed "$SEED" --host "10.213.$n.1" --port 7000 \
    $([[ $SEED == tars ]] && echo "--iface pb$ID-c$n") --json "$OUT/client$n.json" "$@" > "$OUT/client$n.md" 2>&1
}
client 1 "$C1" "$@" &
P1=$!
client 2 "$C2" "$@" &
P2=$!
RC=0
wait $P1 || RC=$?
wait $P2 || RC=$?
if (( RC != 0 )); then
  echo "a client failed (exit $RC): see $OUT/client1.md and $OUT/client2.md" >&2
  tail -n 5 "$OUT/client1.md" "$OUT/client2.md" >&2
  exit 1
fi
java -cp "$JAR" io.petrel.rpc.benchmarks.SeedMain merge "$SEED" "$OUT/client1.json" "$OUT/client2.json" \
  | tee "$OUT/merged.md"
