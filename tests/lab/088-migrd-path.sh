#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A moved connection keeps what it knew of its path (TCP_REPAIR_PATH,
# kernel/patches/0002-0004, "repair-path" in the hello): the idle
# connections streamd holds on port 7401 have an RTT from their
# handshake, so on the destination their retransmission timeout is about
# 200 ms, as on the source, not the 3 s of a socket with no RTT sample.
# Then each side in turn says "repair-path no", as a host without the
# kernel option would: the move still succeeds and loses nothing, the
# records carry no path, and the destination's idle sockets wait 3 s.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT

# rtos GUEST: the RTO (ms) of each of svc's idle connections (port 7401)
rtos() { svc_rtos "$1" 7401; }

# all_below MAX LIST: every value of LIST below MAX, and LIST not empty
all_below() {
	local v n=0
	[ -n "$2" ] || return 1
	for v in $2; do
		awk -v v="$v" -v m="$1" 'BEGIN { exit !(v < m) }' || return 1
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

# all_from MIN LIST: every value of LIST at least MIN, and LIST not empty
all_from() {
	local v
	[ -n "$2" ] || return 1
	for v in $2; do
		awk -v v="$v" -v m="$1" 'BEGIN { exit !(v >= m) }' || return 1
	done
}

# conns: the connections of the last report, listeners and UDP aside
conns() { echo $(( $(rep .sockets.tcp_established) + $(rep .sockets.tcp_closing) )); }

check "migrd on host1 and host2, peered" mig_setup
for g in host1 host2; do
	like "$(gx "$g" "$MIGCTL -j peers" | jq -r .data.peers[0].state)" '^up$' "$g: peer up"
done
check "svc created and serving on host1 through migrd" svc_start host1 20000
capture_start
# one busy connection each way of IP, two idle ones (port 7401), and the
# two half-closing kinds: streamc spreads -n over its -c targets
gx client "rm -f /tmp/$NS.report; setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' \
	-c $SVC4:7401,idle -c '[$SVC6]:7401,idle' -c '[$SVC6]:7402,halfclose=8' \
	-c $SVC4:7403,peershut -n 6 -r 20000 -d 120 -p 500 -o /tmp/$NS.report \
	</dev/null >/tmp/$NS.client 2>&1 &"
sleep 5
before=$(rtos host1)
diag "host1, before: RTO of the idle connections: $before ms"
if all_below 1000 "$before"; then pass "host1's idle connections have an RTT (RTO $before ms)"; else fail "host1's idle connections: RTO '$before' ms"; fi

# --- both hosts have it: the path moves both ways
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "host1 -> host2 exits 0"
n=$(conns)
is "$(rep .sockets.with_path)" "$n" "every one of the $n connections carried its path"
like "$MOUT" "path +$n +connections kept their RTT" "migctl says how many kept their path"
after=$(rtos host2)
diag "host2, after: $after ms"
if all_below 1000 "$after"; then pass "on host2 the idle connections wait ${after}ms, not 3 s"; else fail "on host2 the idle connections' RTO is '$after' ms"; fi
sleep 2
migrate host2 host1
is "$MRC" 0 "host2 -> host1 exits 0"
is "$(rep .sockets.with_path)" "$(conns)" "back: every connection carried its path"
after=$(rtos host1)
if all_below 1000 "$after"; then pass "back on host1 the RTO is ${after}ms"; else fail "back on host1 the RTO is '$after' ms"; fi

# --- the destination says no: it does not announce repair-path
migrd_conf host2 host1 -- "repair-path no"
check "host2's migrd restarted with repair-path no" restart host2
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "host1 -> host2 (destination without it) exits 0"
is "$(rep .sockets.with_path)" 0 "no record carried a path"
like "$MOUT" "path +0 +connections .*not on both hosts" "migctl says why none kept it"
after=$(rtos host2)
if all_from 2900 "$after"; then pass "without it host2's idle connections start with the 3 s RTO ($after ms)"; else fail "without it host2's RTO is '$after' ms"; fi

# --- the source says no, though the destination announces it
migrd_conf host2 host1
check "host2's migrd restarted with repair-path yes" restart host2
migrate host2 host1
is "$MRC" 0 "host2 -> host1 (both have it again) exits 0"
is "$(rep .sockets.with_path)" "$(conns)" "with both on, the path came along again"
migrd_conf host1 host2 -- "repair-path no"
check "host1's migrd restarted with repair-path no" restart host1
migrate host1 host2
is "$MRC" 0 "host1 -> host2 (source without it) exits 0"
is "$(rep .sockets.with_path)" 0 "the source sent no path"
after=$(rtos host2)
if all_from 2900 "$after"; then pass "host2's idle connections start with the 3 s RTO ($after ms)"; else fail "host2's RTO is '$after' ms"; fi
is "$( (migrd_log host1; migrd_log host2) | grep -c 'TCP_REPAIR_PATH.*left out')" 0 \
	"every path sent was set: no destination left one out"

r=$(client_report)
check_client "$r" "across six moves, with and without paths"
finrst=$(capture_stop)
is "$(grep -c . <<<"$finrst")" 0 "no FIN or RST from the service's busy port on the LAN"
[ -z "$finrst" ] || diag "$finrst"
done_testing
