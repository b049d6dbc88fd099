#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# `make demo`: boot the lab, run migrd on host1 and host2 (TLS with lab
# certificates), start the test service in a namespace on host1 through
# migctl while the client keeps connections busy both ways, then
# "migctl migrate svc host2" and back to host1, printing each move's
# phases and figures and, at the end, the client's verdict.  Then
# checkpoint mode: an unmodified redis-server, its data only in memory,
# moved with its memory by CRIU to host2 and back while a client writes
# and reads keys; the client's verdict says every acknowledged write is
# still there and the server is the same process.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export BUILD=${BUILD:-build/release}
B=$top/$BUILD
lab="$top/vmlab/lab"
share=${MIGR_LAB:-/run/migr-lab}/share
W=$B/tests/workload
MIGRD=$B/migrd/migrd
MIGCTL=$B/migctl/migctl
SERVE="$W/streamd -r 16384 -l [::]:7000 -l [::]:7001,rate=0"
declare -A ADDR=([host1]=10.77.0.1 [host2]=10.77.0.2)
say() { printf '\n== %s\n' "$*"; }
x() { "$lab" exec -t 120 "$@"; }

# The service runs as nobody with CAP_NET_ADMIN (streamd reads its TCP
# sequence numbers in repair mode to resume its byte pattern), unless
# the build folder is closed to other users (a clone in /root): then as
# root, as migrd warns.
if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$W/streamd" 2>/dev/null; then
	WL_USER=nobody WL_CAPS=cap_net_admin
else
	WL_USER=root WL_CAPS=none
fi

conf() {	# conf HOST PEER
	cat <<-EOC
	hostname $1
	listen ${ADDR[$1]} port 7780
	peer $2 ${ADDR[$2]} port 7780
	allow $2 program $B/tests/workload/ /usr/bin/redis-check-rdb
	allow $2 address 10.77.0.0/24 fd00:77::/64
	allow $2 mac 52:54:00
	allow $2 namespace svc kv
	allow $2 checkpoint 256
	certificate /mnt/lab/demo/certs/$1.pem
	key /mnt/lab/demo/certs/$1-key.pem
	ca /mnt/lab/demo/certs/ca.pem
	state-dir /var/lib/migrd
	# under TCG a busy guest may not run migrd for a second or two
	heartbeat-interval 500
	dead-time 4000
	handshake-timeout 10
	workload-user $WL_USER
	workload-capabilities $WL_CAPS
	EOC
}

"$lab" down
trap '"$lab" down' EXIT
say "booting the lab (host1, host2, client) under QEMU"
"$lab" up
"$lab" status

say "migrd on host1 and host2 (mutual TLS, lab CA)"
mkdir -p "$share/demo"
"$top/vmlab/certs.sh" "$share/demo/certs" >/dev/null
conf host1 host2 > "$share/demo/host1.conf"
conf host2 host1 > "$share/demo/host2.conf"
for h in host1 host2; do
	x "$h" "mkdir -p /run/migrd; setsid $MIGRD -d -f /mnt/lab/demo/$h.conf </dev/null >/run/migrd/migrd.log 2>&1 &
		for i in \$(seq 100); do $MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
done
for _ in $(seq 100); do
	x host1 "$MIGCTL peers" | grep -q 'host2.*up' &&
		x host2 "$MIGCTL peers" | grep -q 'host1.*up' && break
	sleep 0.2
done
x host1 "$MIGCTL peers"

# gated: each destination starts it before going live, and it waits at
# its gate (MIGR_GATE_FD) until its sockets are live
say "host1: namespace svc (10.77.0.100, fd00:77::100) running the test service, gated"
x host1 "$MIGCTL ns create svc --addr 10.77.0.100/24 --addr fd00:77::100/64 --mac 52:54:00:77:01:00 &&
	$MIGCTL run svc --gate -- $SERVE && sleep 1 && ip netns exec svc ss -Htln"

say "client: 16 connections (IPv4 and IPv6, 4 idle), 16 kB/s each way, a new connection every 500 ms"
x client "setsid $W/streamc -c 10.77.0.100:7000 -c '[fd00:77::100]:7000' -c 10.77.0.100:7001,idle \
	-n 16 -r 16384 -d 0 -p 500 -o /tmp/demo.report </dev/null >/tmp/demo.client 2>&1 &"
sleep 4

say "host1: migctl migrate svc host2"
x host1 "$MIGCTL migrate svc host2"
x host1 "ip netns list | grep -qx svc && echo 'svc is still on host1!' || echo 'svc is gone from host1'"
sleep 4
say "host2: migctl migrate svc host1"
x host2 "$MIGCTL migrate svc host1"
x host2 "ip netns list | grep -qx svc && echo 'svc is still on host2!' || echo 'svc is gone from host2'"
sleep 4

say "client verdict"
x client "pkill -TERM -x streamc; sleep 1; cat /tmp/demo.report" | tr ' ' '\n' | sed 's/^/  /'
x client "grep -q verdict=PASS /tmp/demo.report"

# --- checkpoint mode: a program that keeps its state in memory
if [ "$WL_USER" = root ]; then
	say "checkpoint mode skipped: the build folder is closed to nobody, and a restored program may not run as root"
	exit 0
fi
RS=/tmp/redis-server	# redis-tools' server binary, by the name that makes it one
say "host1: namespace kv (10.77.0.110) running redis-server in checkpoint mode (its data only in memory)"
for h in host1 host2; do x "$h" "ln -sf /usr/bin/redis-check-rdb $RS"; done
x host1 "$MIGCTL ns create kv --addr 10.77.0.110/24 --mac 52:54:00:77:01:10 &&
	$MIGCTL run kv --checkpoint -- $RS --port 6379 --bind 0.0.0.0 --protected-mode no --save '' \
		--appendonly no --dir /tmp --daemonize no &&
	for i in \$(seq 100); do ip netns exec kv ss -Htln sport = :6379 | grep -q . && break; sleep 0.1; done"
say "client: 4 connections writing keys and reading them back"
x client "rm -f /tmp/demo.kvstop; setsid python3 $top/tests/workload/kvc.py -n 4 -d 300 -s /tmp/demo.kvstop 10.77.0.110 6379 \
	</dev/null >/tmp/demo.kvc 2>&1 &"
sleep 3
x client "redis-cli -h 10.77.0.110 info server | grep -E '^(run_id|process_id|uptime_in_seconds)'; echo keys: \$(redis-cli -h 10.77.0.110 dbsize)"
say "host1: migctl migrate kv host2"
x host1 "$MIGCTL migrate kv host2"
x client "redis-cli -h 10.77.0.110 info server | grep -E '^(run_id|process_id|uptime_in_seconds)'; echo keys: \$(redis-cli -h 10.77.0.110 dbsize)"
sleep 3
say "host2: migctl migrate kv host1"
x host2 "$MIGCTL migrate kv host1"
sleep 2
say "client verdict (every acknowledged write read back, the same run_id)"
x client "touch /tmp/demo.kvstop; while pgrep -f '[k]vc.py' >/dev/null; do sleep 0.3; done; cat /tmp/demo.kvc" |
	tr ' ' '\n' | sed 's/^/  /'
x client "grep -q verdict=PASS /tmp/demo.kvc"
