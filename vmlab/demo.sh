#!/usr/bin/env bash
# `make demo`: boot the lab, start a live service in a namespace on host1
# with the client keeping connections busy both ways, move it to host2
# and back while it serves, and print each move's figures and the
# client's verdict.
#
# The moves use the migration mechanics directly (migtool: the same code
# migrd drives); `migctl migrate` takes over once the daemons carry them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=${BUILD:-build/release}
B=$top/$BUILD
lab="$top/vmlab/lab"
share=${MIGR_LAB:-/run/migr-lab}/share
W=$B/tests/workload
T=$B/tests/tools/migtool
CG=/sys/fs/cgroup/svc
SERVE="$W/streamd -r 16384 -l [::]:7000 -l [::]:7001,rate=0"
say() { printf '\n== %s\n' "$*"; }
x() { "$lab" exec -t 120 "$@"; }
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

"$lab" down
trap '"$lab" down' EXIT
say "booting the lab (host1, host2, client) under QEMU"
"$lab" up
"$lab" status

say "host1: namespace svc (10.77.0.100, fd00:77::100) running the test service"
x host1 "set -e
	ip netns add svc
	ip link add vsvc type veth peer name eth0 netns svc
	ip link set vsvc master br0 up
	ip -n svc link set lo up
	ip -n svc link set eth0 address 52:54:00:77:01:00 up
	ip -n svc addr add 10.77.0.100/24 dev eth0
	ip -n svc -6 addr add fd00:77::100/64 dev eth0 nodad
	mkdir $CG
	setsid sh -c 'echo \$\$ > $CG/cgroup.procs; exec ip netns exec svc $SERVE' </dev/null >/dev/null 2>&1 &
	sleep 1
	ip netns exec svc ss -Htln"

say "client: 16 connections (IPv4 and IPv6, 4 idle), 16 kB/s each way, a new connection every 500 ms"
x client "setsid $W/streamc -c 10.77.0.100:7000 -c '[fd00:77::100]:7000' -c 10.77.0.100:7001,idle \
	-n 16 -r 16384 -d 0 -p 500 -o /tmp/demo.report </dev/null >/tmp/demo.client 2>&1 &"
sleep 4

move() {	# move FROM TO
	local from=$1 to=$2 src dst
	rm -f "$share"/svc.*
	say "migrate svc: $from -> $to"
	x "$to" "setsid $T dest svc vsvc br0 $CG /mnt/lab/svc.rec -- $SERVE </dev/null >/tmp/svc.dest 2>&1 &"
	x "$from" "setsid $T source svc $CG vsvc /mnt/lab/svc.rec /mnt/lab/svc.decision </dev/null >/tmp/svc.src 2>&1 &"
	for _ in $(seq 300); do x "$to" "grep -q '^live=' /tmp/svc.dest" && break; sleep 0.1; done
	dst=$(x "$to" "cat /tmp/svc.dest")
	if [ "$(kv "$dst" live)" != 1 ]; then
		echo commit-refused > "$share/svc.decision"
		echo "the destination did not go live: $dst" >&2
		exit 1
	fi
	echo commit > "$share/svc.decision"
	for _ in $(seq 300); do x "$from" "grep -q '^decision=' /tmp/svc.src" && break; sleep 0.1; done
	src=$(x "$from" "cat /tmp/svc.src")
	printf '  %-28s %s\n' "sockets moved" "$(kv "$src" sockets)" \
		"queued bytes moved" "$(kv "$src" queued_bytes)" \
		"freeze ($from)" "$(kv "$src" freeze_ms) ms" \
		"lock ($from)" "$(kv "$src" lock_ms) ms" \
		"collect ($from)" "$(kv "$src" collect_ms) ms" \
		"dump ($from)" "$(kv "$src" dump_ms) ms" \
		"build ns ($to)" "$(kv "$dst" build_ms) ms" \
		"restore sockets ($to)" "$(kv "$dst" restore_ms) ms" \
		"attach/unlock/resume ($to)" "$(kv "$dst" live_ms) ms" \
		"decision" "$(kv "$src" decision)"
	x "$from" "ip netns list | grep -qx svc && echo 'svc is still on $from!' || echo 'svc is gone from $from'"
}

move host1 host2
sleep 4
move host2 host1
sleep 4

say "client verdict"
x client "pkill -TERM -x streamc; sleep 1; cat /tmp/demo.report" | tr ' ' '\n' | sed 's/^/  /'
