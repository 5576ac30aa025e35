#!/bin/bash
# run.sh [phase...]: builds (offline), sets up the namespaces, starts 3 servers (one per namespace), runs each
# phase (a fresh client JVM in the root namespace per phase) and removes everything on exit (trap).
# Phases: p0 p1a p1b p1c p1d p2 p3 p3c p4 p5 p5b p6a p6b p6c (default: all). Output: out/<phase>.log, run/ledger-sN.txt
set -u
cd "$(dirname "$0")"
MVN=${MVN:-$(ls -d ~/.m2/wrapper/dists/apache-maven-3.9.16/*/ | head -1)bin/mvn}
$MVN -B -q -o compile || exit 1
CP="target/classes:$(ls target/lib/*.jar | tr '\n' ':')"
JAVA="java -Xmx256m -XX:+UseSerialGC -cp $CP"
mkdir -p run out
rm -f run/ledger-*.txt run/flap.pid
PIDS=()
cleanup() {
  [ -f run/flap.pid ] && kill "$(cat run/flap.pid)" 2>/dev/null
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  ./net.sh down
  echo "cleanup done: namespaces left: $(ip netns | wc -l), brchaos: $(ip link show brchaos 2>/dev/null | wc -l)"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
./net.sh down; ./net.sh up || exit 1
for i in 1 2 3; do
  ip netns exec chaos$i $JAVA chaos.ServerMain s$i 10.77.0.1$i 7000 run/ledger-s$i.txt > out/server-s$i.log 2>&1 &
  PIDS+=($!)
done
S1=${PIDS[0]}
echo "0 0" > run/delay
$JAVA chaos.DelayProxy 10.77.0.1 7101 10.77.0.11 7000 run/delay > out/delayproxy.log 2>&1 &
PIDS+=($!)
for i in 1 2 3; do
  for _ in $(seq 100); do grep -q "serving on" out/server-s$i.log && break; sleep 0.2; done
  grep "serving on" out/server-s$i.log || { echo "server s$i did not start"; exit 1; }
done
NS1="ip netns exec chaos1"
LIVE="10.77.0.11:7000,10.77.0.12:7000,10.77.0.13:7000"
client() { # client PHASE args...
  local ph=$1; shift
  echo "=== $ph $(date -u +%T)"
  timeout 150 $JAVA chaos.ClientMain phase=$ph maxCalls=20000 "$@" 2>&1 | tee out/$ph.log | grep -v '^\[.*\]   t=' | cut -c1-400
}
phase() {
  case $1 in
    p0) client p0 duration=15 ;;
    # 1: loss on s1's link (both directions): 20% in random 50 ms slots, then 100% (bridge port disabled).
    p1a) client p1a victim=s1 "event=5:./flap.sh vh1 20 10 &" "event=15:kill \$(cat run/flap.pid); sleep 0.1; bridge link set dev vh1 state 3" ;;
    p1b) client p1b victim=s1 "event=5:bridge link set dev vh1 state 0" "event=15:bridge link set dev vh1 state 3" ;;
    p1c) client p1c victim=s1 keepaliveMs=1000 eject=true \
        "event=5:bridge link set dev vh1 state 0" "event=15:bridge link set dev vh1 state 3" ;;
    # 2: 300 +- 100 ms added to s1's replies (a relay in front of s1, since netem is missing).
    # 1d: a 30 s blackhole with the default keepalive (30 s): how long after the heal until calls succeed again.
    p1d) client p1d victim=s1 duration=60 "event=5:bridge link set dev vh1 state 0" "event=35:bridge link set dev vh1 state 3" ;;
    p2) client p2 victim=s1 target=static://10.77.0.1:7101,10.77.0.12:7000,10.77.0.13:7000 \
        "event=5:echo 300 100 > run/delay" "event=15:echo 0 0 > run/delay" ;;
    # 3: one-way partition: s1's packets to the client dropped in s1's namespace (requests still arrive).
    p3) client p3 victim=s1 "event=5:$NS1 ip route add blackhole 10.77.0.1/32" "event=15:$NS1 ip route del blackhole 10.77.0.1/32" ;;
    p3c) client p3c victim=s1 keepaliveMs=1000 eject=true \
        "event=5:$NS1 ip route add blackhole 10.77.0.1/32" "event=15:$NS1 ip route del blackhole 10.77.0.1/32" ;;
    p4) client p4 victim=s1 "event=5:$NS1 ip link set eth0 down" "event=15:$NS1 ip link set eth0 up" ;;
    p5) client p5 victim=s1 "event=5:kill -STOP $S1" "event=15:kill -CONT $S1" ;;
    p5b) client p5b victim=s1 lb=round_robin eject=true "event=5:kill -STOP $S1" "event=15:kill -CONT $S1" ;;
    # 6: a dead IP (no host on the bridge: ARP unanswered) listed beside the live ones; client never start()ed.
    p6a) client p6a duration=15 start=false target=static://10.77.0.99:7000,$LIVE ;;
    p6b) client p6b duration=15 start=false dns=10.77.0.99,10.77.0.11,10.77.0.12,10.77.0.13 ;;
    p6c) client p6c duration=15 start=false lb=round_robin target=static://10.77.0.99:7000,$LIVE ;;
    *) echo "unknown phase $1" ;;
  esac
}
if [ $# -eq 0 ]; then set -- p0 p1a p1b p1c p1d p2 p3 p3c p4 p5 p5b p6a p6b p6c; fi
for ph in "$@"; do phase $ph; done
