#!/usr/bin/env bash
# `make demo`: boot the lab, start a service in a network namespace on
# host1 (its veth bridged onto the LAN) and talk to it from the client.
# The live migration of that service joins this demo with migctl migrate.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=${BUILD:-build/release}
lab="$top/vmlab/lab"
say() { printf '\n== %s\n' "$*"; }

"$lab" down
trap '"$lab" down' EXIT
say "booting the lab (host1, host2, client) under QEMU"
"$lab" up
"$lab" status

say "host1: namespace 'svc' with 10.77.0.100 and fd00:77::100, veth on br0"
"$lab" exec host1 '
	ip netns add svc
	ip link add vsvc type veth peer name eth0 netns svc
	ip link set vsvc master br0 up
	ip -n svc link set lo up
	ip -n svc link set eth0 up
	ip -n svc addr add 10.77.0.100/24 dev eth0
	ip -n svc -6 addr add fd00:77::100/64 dev eth0 nodad
	ip netns exec svc setsid socat TCP6-LISTEN:7000,ipv6only=0,reuseaddr,fork \
		SYSTEM:"echo served by \$(hostname) from namespace svc; tr a-z A-Z" \
		</dev/null >/dev/null 2>&1 &
	sleep 1
	ip -n svc -br addr show eth0'

for addr in 10.77.0.100 '[fd00:77::100]'; do
	say "client -> $addr:7000"
	"$lab" exec client "echo 'hello from the client' | socat -t 2 - TCP:$addr:7000"
done
say "demo done: the client reached the service in host1's namespace over the lab LAN"
