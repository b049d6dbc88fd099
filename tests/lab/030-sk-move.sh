#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Live TCP connections move between hosts through the socket engine.
# For each state and family: a service namespace on host1 holds one
# connection with a client (skstream, a byte-exact pattern stream both
# ways) with bytes in its receive queue and in its send queue (unsent,
# and in flight in one case); sktool dumps it to JSON in the shared
# folder and the owner is killed while the socket is in repair mode;
# the namespace is rebuilt on host2 (same MAC, same addresses, bridged
# onto the LAN) behind the same lock, the socket restored from the
# JSON, the lock lifted, the socket resumed and the stream continued.  Checked at the client: every byte in
# both directions exact, the FIN exchange complete, no RST on the wire.
. "$(dirname "$0")/../lib.sh"

T=$B/tests/tools
SH=/mnt/lab/sk030
MAC=52:54:00:77:01:30
A4=10.77.0.130
A6=fd00:77::130
# Lift the lock and announce the move: any frame from the namespace
# teaches the switch and the client where the MAC now lives (a
# FIN_WAIT2 socket has nothing to send that would do it).
UNLOCK="nft delete table inet sklock; ping -c1 -W1 10.77.0.10 >/dev/null; \
ping -c1 -W1 fd00:77::10 >/dev/null; true"

# svc_make HOST [locked]: the service namespace, bridged onto the LAN;
# locked: nothing in or out but lo from the start (as the daemon does
# on the destination), so no segment meets a namespace without its
# sockets (it would answer with a RST).
svc_make() {
	local lock=true
	[ "${2:-}" = locked ] && lock="ip netns exec svc nft -f - <<'NFT'
table inet sklock {
	chain in { type filter hook input priority 0; policy accept; iif != lo drop; }
	chain out { type filter hook output priority 0; policy accept; oif != lo drop; }
}
NFT"
	gx "$1" "set -e
	ip netns add svc
	$lock
	ip link add vsvc type veth peer name eth0 netns svc
	ip link set vsvc master br0 up
	ip -n svc link set lo up
	ip -n svc link set eth0 address $MAC up
	ip -n svc addr add $A4/24 dev eth0
	ip -n svc -6 addr add $A6/64 dev eth0 nodad"
}
svc_del() {
	gx "$1" 'for p in $(ip netns pids svc 2>/dev/null); do kill -9 $p; done
		ip link del vsvc; ip netns del svc' >/dev/null 2>&1
}
cleanup() {
	svc_del host1
	svc_del host2
	gx client "for f in $SH/*.pid; do [ -f \$f ] && kill \$(cat \$f); done
		rm -rf $SH" >/dev/null 2>&1
}
trap cleanup EXIT
cleanup
gx client "mkdir -p $SH"

# wait_for GUEST SECONDS TEST: poll a shell test in a guest.
wait_for() {
	gx -t $(($2 + 10)) "$1" "for i in \$(seq $(($2 * 10))); do $3 && exit 0; sleep 0.1; done; exit 1"
}

# no_rst NAME ADDR PORT: the client's capture holds no RST, but one: a
# RST the service's host sends once both FINs of that connection were
# acknowledged is TCP's own race, not a loss (the service's FIN was sent
# again just before the client's ACK of it arrived; the socket is gone
# when the client's TIME_WAIT answers the copy).  Any RST is shown with
# the segments before it.
no_rst() {
	local counts
	counts=$(gx client "tcpdump -r $SH/$1.pcap -n -S 2>/dev/null" | awk -v svc="$2.$3" '
		function num(key,   s) {
			s = $0; if (!sub(".*" key " ", "", s)) return -1
			sub(/,.*/, "", s); return s
		}
		{ peer = $3 == svc ? $5 : $3; sub(/:$/, "", peer) }
		$3 == svc && /Flags \[[^]]*F/ {
			n = split(num("seq"), a, ":"); fin[peer] = a[n] + 1
		}
		$3 != svc && fin[peer] && num("ack") >= fin[peer] { acked[peer] = 1 }
		/Flags \[R/ { if ($3 == svc && acked[peer]) late++; else bad++ }
		END { print bad + 0, late + 0 }')
	is "${counts% *}" 0 "$1: no RST on the wire"
	[ "$counts" = "0 0" ] || diag "$(gx client "tcpdump -r $SH/$1.pcap -n -tt -S 2>/dev/null |
			grep -B12 -A3 'Flags \[R' | cut -c1-160")"
	[ "${counts#* }" = 0 ] || diag "($1: ${counts#* } RST after the FIN exchange ended, from $2)"
}

# move_case NAME ADDR PORT STATE SERVE_ARGS CLIENT_ARGS CONT_ARGS [inflight]
move_case() {
	local n=$1 addr=$2 port=$3 want=$4 serve=$5 cl=$6 cont=$7 inflight=${8:-}
	local go="" pid fd out dumped rst ss_state
	diag "case $n: $want over $addr"
	[ -n "$inflight" ] && go="--go $SH/$n.go"
	svc_make host1 || { fail "$n: namespace on host1"; return; }
	gx host1 "ip netns exec svc setsid $T/skstream serve $addr $port $serve \
		$go --state $SH/$n.state </dev/null >$SH/$n.serve.log 2>&1 &
		echo \$! > $SH/$n.serve.pid"
	wait_for host1 10 "ip netns exec svc ss -Htln | grep -q :$port" ||
		{ fail "$n: server listening"; svc_del host1; return; }
	gx client "setsid tcpdump -i br0 -n -U -w $SH/$n.pcap tcp port $port \
		</dev/null >/dev/null 2>&1 & echo \$! > $SH/$n.tcpdump.pid; sleep 1
		setsid timeout 300 $T/skstream client $addr $port $cl --wait $SH/$n.moved \
		--state $SH/$n.state </dev/null >$SH/$n.client.log 2>&1 &
		echo \$! > $SH/$n.client.pid"
	if [ -n "$inflight" ]; then
		# Drop what reaches the service while it writes: its bytes
		# reach the client but stay unacknowledged (in flight).
		sleep 1
		gx host1 "ip netns exec svc nft add table inet sklock
			ip netns exec svc nft add chain inet sklock in '{ type filter hook input priority 0; policy accept; iif != lo drop; }'
			touch $SH/$n.go"
	fi
	wait_for host1 20 "test -s $SH/$n.state" ||
		{ fail "$n: server reached its state"; svc_del host1; return; }
	case $want in
	ESTABLISHED) ss_state=ESTAB ;;
	FIN_WAIT1) ss_state=FIN-WAIT-1 ;;
	FIN_WAIT2) ss_state=FIN-WAIT-2 ;;
	*) ss_state=${want/_/-} ;;
	esac
	# (a FIN may still be on its way: give the state a few seconds)
	wait_for host1 10 "ip netns exec svc ss -Htn sport = :$port | grep -q '^$ss_state '"
	like "$(gx host1 "ip netns exec svc ss -Htn sport = :$port")" \
		"^$ss_state " "$n: socket is $want on host1"
	# The lock the daemon sets before dumping: nothing in or out but lo.
	gx host1 "ip netns exec svc nft add table inet sklock
		ip netns exec svc nft add chain inet sklock out '{ type filter hook output priority 0; policy accept; oif != lo drop; }'
		ip netns exec svc nft add chain inet sklock in '{ type filter hook input priority 0; policy accept; iif != lo drop; }'" >/dev/null 2>&1
	pid=$(gx host1 "cat $SH/$n.serve.pid")
	fd=$(gx host1 "cut -d' ' -f1 $SH/$n.state")
	check "$n: sktool check says movable" gx host1 \
		"ip netns exec svc $T/sktool check --pid $pid --fd $fd"
	check "$n: dump to JSON" gx host1 \
		"ip netns exec svc $T/sktool dump --pid $pid --fd $fd > $SH/$n.json"
	dumped=$(gx host1 "cat $SH/$n.json")
	like "$dumped" "\"state\":\"$want\"" "$n: record says $want"
	diag "$(sed -E 's/"data":"[^"]*"/"data":"…"/g' <<<"$dumped")"
	# Kill the owner: the socket is in repair mode, so no FIN, no RST.
	gx host1 "kill -9 $pid"
	svc_del host1
	# The client may read again: its window opens towards nobody.
	gx client "touch $SH/$n.moved"
	# host2 builds the namespace locked, restores, unlocks, resumes.
	svc_make host2 locked || { fail "$n: namespace on host2"; return; }
	out=$(gx -t 120 host2 "ip netns exec svc timeout 100 $T/sktool restore \
		--in $SH/$n.json --unlock '$UNLOCK' \
		--resume -- $T/skstream cont --fd 3 \
		--state $SH/$n.state $cont" 2>&1)
	like "$out" "^ok cont" "$n: restored socket continues on host2 (server side byte-exact)"
	wait_for client 60 "grep -q '^ok client' $SH/$n.client.log || ! kill -0 \$(cat $SH/$n.client.pid) 2>/dev/null"
	out=$(gx client "cat $SH/$n.client.log")
	like "$out" "^ok client" "$n: client read and wrote every byte, then EOF"
	gx client "kill \$(cat $SH/$n.tcpdump.pid)"
	sleep 1
	no_rst "$n" "$addr" "$port"
	svc_del host2
}

# listen_case NAME ADDR PORT: a listener with one connection waiting in
# its accept queue (never accepted on host1) moves; the connection is
# accepted at dump time and continues as an established socket tied to
# the listener; the restored listener takes a new connection.
listen_case() {
	local n=$1 addr=$2 port=$3 pid fd out rst
	diag "case $n: LISTEN with a waiting connection over $addr"
	svc_make host1 || { fail "$n: namespace on host1"; return; }
	gx host1 "ip netns exec svc setsid $T/skstream hold $addr $port \
		--state $SH/$n.state </dev/null >$SH/$n.serve.log 2>&1 &
		echo \$! > $SH/$n.serve.pid; echo '0 0 0 0' > $SH/$n.child"
	wait_for host1 10 "ip netns exec svc ss -Htln | grep -q :$port" ||
		{ fail "$n: listening"; svc_del host1; return; }
	gx client "setsid tcpdump -i br0 -n -U -w $SH/$n.pcap tcp port $port \
		</dev/null >/dev/null 2>&1 & echo \$! > $SH/$n.tcpdump.pid; sleep 1
		setsid timeout 300 $T/skstream client $addr $port --write 50000 \
		--read 600000 --rcvbuf 8192 --wait $SH/$n.moved \
		</dev/null >$SH/$n.client.log 2>&1 & echo \$! > $SH/$n.client.pid"
	wait_for host1 20 "ip netns exec svc ss -Htn state established sport = :$port | grep -q ." ||
		{ fail "$n: connection waiting in the accept queue"; svc_del host1; return; }
	sleep 1
	gx host1 "ip netns exec svc nft -f - <<'NFT'
table inet sklock {
	chain in { type filter hook input priority 0; policy accept; iif != lo drop; }
	chain out { type filter hook output priority 0; policy accept; oif != lo drop; }
}
NFT"
	pid=$(gx host1 "cat $SH/$n.serve.pid")
	fd=$(gx host1 "cut -d' ' -f1 $SH/$n.state")
	check "$n: dump listener and its accept queue" gx host1 \
		"ip netns exec svc $T/sktool dump --accept --pid $pid --fd $fd > $SH/$n.json"
	# (read in the guest: a record with its queues is long)
	check "$n: first record is the listener, backlog 8" gx host1 \
		"sed -n 1p $SH/$n.json | grep -E '\"id\":1,.*\"state\":\"LISTEN\".*\"tcp\":\\{\"backlog\":8\\}'"
	check "$n: second record is the waiting connection, 50000 bytes queued" gx host1 \
		"sed -n 2p $SH/$n.json | grep -E '\"id\":2,.*\"state\":\"ESTABLISHED\",\"parent\":1,.*\"rcvq\":\\{\"len\":50000'"
	gx host1 "kill -9 $pid"
	svc_del host1
	gx client "touch $SH/$n.moved
		setsid timeout 300 $T/skstream client $addr $port --write 1000 \
		--read 2000 </dev/null >$SH/$n.client2.log 2>&1 &"
	svc_make host2 locked || { fail "$n: namespace on host2"; return; }
	out=$(gx -t 150 host2 "ip netns exec svc timeout 120 $T/sktool restore \
		--in $SH/$n.json --unlock '$UNLOCK' --resume -- sh -c '
		$T/skstream accept --fd 3 --read-total 1000 --write-total 2000 &
		$T/skstream cont --fd 4 --state $SH/$n.child --read-total 50000 \
			--write-total 600000; wait'" 2>&1)
	like "$out" "ok cont read=50000 wrote=600000" "$n: the accepted connection continues on host2"
	like "$out" "ok accept read=1000 wrote=2000" "$n: the restored listener accepts a new connection"
	wait_for client 60 "grep -q '^ok client' $SH/$n.client.log || ! kill -0 \$(cat $SH/$n.client.pid) 2>/dev/null"
	like "$(gx client "cat $SH/$n.client.log")" "^ok client read=600000 wrote=50000" \
		"$n: client of the waiting connection saw every byte"
	like "$(gx client "cat $SH/$n.client2.log")" "^ok client read=2000 wrote=1000" \
		"$n: new client served by the restored listener"
	gx client "kill \$(cat $SH/$n.tcpdump.pid)"
	sleep 1
	no_rst "$n" "$addr" "$port"
	svc_del host2
}

move_case est4 $A4 7301 ESTABLISHED "--read 20000 --write 300000" \
	"--write 50000 --read 600000 --rcvbuf 8192" \
	"--read-total 50000 --write-total 600000"
move_case est6 $A6 7302 ESTABLISHED "--read 20000 --write 300000" \
	"--write 50000 --read 600000 --rcvbuf 8192" \
	"--read-total 50000 --write-total 600000"
move_case est4-inflight $A4 7303 ESTABLISHED "--read 20000 --write 300000" \
	"--write 50000 --read 600000 --rcvbuf 8192" \
	"--read-total 50000 --write-total 600000" inflight
move_case close_wait4 $A4 7304 CLOSE_WAIT "--read 20000 --write 300000" \
	"--write 50000 --read 600000 --rcvbuf 8192 --shut-after-write" \
	"--read-total 50000 --write-total 600000"
move_case close_wait6 $A6 7305 CLOSE_WAIT "--read 20000 --write 300000" \
	"--write 50000 --read 600000 --rcvbuf 8192 --shut-after-write" \
	"--read-total 50000 --write-total 600000"
move_case fin_wait1_4 $A4 7306 FIN_WAIT1 "--read 20000 --write 300000 --shut" \
	"--write 50000 --read 0 --rcvbuf 8192" "--read-total 50000"
move_case fin_wait2_6 $A6 7307 FIN_WAIT2 "--read 20000 --write 3000 --shut" \
	"--write 50000 --read 0" "--read-total 50000"
move_case last_ack6 $A6 7308 LAST_ACK "--read 20000 --after-fin --write 300000 --shut" \
	"--write 50000 --read 0 --rcvbuf 8192 --shut-after-write" "--read-total 50000"
# Simultaneous close: our FIN waits behind unsent bytes (the client's
# window is shut) when the client's FIN arrives.
move_case closing4 $A4 7310 CLOSING "--read 20000 --write 300000 --shut" \
	"--write 50000 --read 0 --rcvbuf 8192 --shut-after-write --shut-delay-ms 1500" \
	"--read-total 50000"
listen_case listen4 $A4 7311
done_testing
