#!/bin/bash
# flap.sh PORT PERCENT SECONDS: random-slot packet loss on bridge port PORT (sch_netem is not in this kernel):
# every 50 ms slot the port drops everything (STP state disabled) with probability PERCENT %, else forwards.
# Ends after SECONDS, or when killed (run/flap.pid), leaving the port forwarding.
echo $$ > run/flap.pid
trap 'bridge link set dev $1 state 3; rm -f run/flap.pid; exit 0' TERM INT
end=$(( $(date +%s%N) + $3 * 1000000000 ))
while [ "$(date +%s%N)" -lt $end ]; do
  if [ $((RANDOM % 100)) -lt $2 ]; then bridge link set dev $1 state 0; else bridge link set dev $1 state 3; fi
  sleep 0.05
done
bridge link set dev $1 state 3; rm -f run/flap.pid
