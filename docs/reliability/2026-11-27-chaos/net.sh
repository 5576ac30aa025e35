#!/bin/bash
# net.sh up|down: bridge brchaos (10.77.0.1/24) in the root namespace, namespaces chaos1..3 each with eth0
# (10.77.0.11..13) veth-paired to vh1..3 on the bridge. "down" removes qdiscs, namespaces, veths and the bridge.
set -u
case "${1:-}" in
  up)
    set -e
    ip link add brchaos type bridge
    ip addr add 10.77.0.1/24 dev brchaos
    ip link set brchaos up
    for i in 1 2 3; do
      ip netns add chaos$i
      ip link add vh$i type veth peer name eth0 netns chaos$i
      ip link set vh$i master brchaos up
      ip netns exec chaos$i ip addr add 10.77.0.1$i/24 dev eth0
      ip netns exec chaos$i ip link set eth0 up
      ip netns exec chaos$i ip link set lo up
    done
    ;;
  down)
    for i in 1 2 3; do
      tc qdisc del dev vh$i root 2>/dev/null
      ip netns exec chaos$i tc qdisc del dev eth0 root 2>/dev/null
      ip link del vh$i 2>/dev/null
      ip netns del chaos$i 2>/dev/null
    done
    ip link del brchaos 2>/dev/null
    true
    ;;
  *) echo "usage: $0 up|down"; exit 2 ;;
esac
