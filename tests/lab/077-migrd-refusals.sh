#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# What cannot be carried exactly is refused, by name, before the freeze,
# and the refusal changes nothing.  In svc on host1, next to streamd:
# a connection with urgent data pending, a TCP_MD5SIG listener, a
# multicast membership, a closed connection still owing its client 4 MiB
# (an orphan; orphan-wait 1500 ms here), a handshake that outlasts the
# gate (its client's last ACK lost), and a host2 that already has a
# namespace svc.  For each: "migctl check" names it and exits 15,
# "migctl migrate" (where the check alone would not stop it) refuses with
# 15, svc stays on host1 serving, and its connections carry on unharmed.
# With every cause gone, check exits 0 and the move succeeds.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
PROBE=$top/tests/workload/sockprobe.py
trap mig_teardown EXIT

# rc_of GUEST CMD: CMD's output, then "rc=N"
rc_of() { gx -t 60 "$1" "$2 2>&1; echo rc=\$?"; }
rc() { sed -n 's/^rc=//p' <<<"$1"; }
# unchanged WHAT: svc on host1 only, still serving new connections
unchanged() {
	is "$(svc_where)" host1 "$1: svc still runs on host1, only there"
	local r
	r=$(gx -t 30 client "$W/streamc -c $SVC4:7400 -n 1 -r 20000 -d 2")
	if [ "$(kv "$r" rx_bytes)" -gt 0 ] 2>/dev/null && [ "$(kv "$r" verdict)" = PASS ]; then
		pass "$1: new connections are served"
	else
		fail "$1: new connections are not served: $r"
	fi
	is "$(gx host2 "ls /run/netns/$NS 2>/dev/null; $MIGCTL -j ns list | jq -r '.data.namespaces[].name'")" "" \
		"$1: host2 has no trace of svc"
}
# probe_run ARGS: sockprobe.py in svc through migrd, wait for "ready"
probe_run() {
	mc host1 "run $NS -- $PROBE $*" >/dev/null &&
	gx host1 "for i in \$(seq 100); do grep -Eq 'ready|listening' /var/log/migr/$NS.log && exit 0; sleep 0.1; done; exit 1"
}
probe_stop() {
	gx host1 "pkill -f '[s]ockprobe.py'; : > /var/log/migr/$NS.log"
	gx client "pkill -f '[s]ockprobe.py'; true"
	sleep 0.5
}

check "migrd on host1 and host2, peered" mig_setup "orphan-wait 1500" "commit-timeout 1000"
check "svc created on host1" mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80"
check "streamd serves in svc (a busy port, a 4 MiB reply port)" \
	mc host1 "run $NS -- $W/streamd -r 20000 -l [::]:7400 -l [::]:7405,reply=4194304,buf=4194304"
check "streamd listens" gx host1 "for i in \$(seq 100); do ip netns exec $NS ss -Htln sport = :7405 | grep -q . && exit 0; sleep 0.1; done; exit 1"

# --- a clean namespace
out=$(rc_of host1 "$MIGCTL check $NS host2")
is "$(rc "$out")" 0 "check of a clean svc against host2 exits 0"
like "$out" "can move; host2 can take it" "and says both sides agree"
out=$(rc_of host1 "$MIGCTL -j check $NS host2")
is "$(sed '/^rc=/d' <<<"$out" | jq -c '[.data.refusals, .data.host.ok]')" '[[],true]' "-j: no refusal, host ok"

# --- an orphan: 4 MiB reply, read at 20 kB/s
gx client "rm -f /tmp/$NS.orph; setsid $W/streamc -c $SVC4:7405,reply,readrate=20000,buf=65536 \
	-n 1 -d 120 -p 0 -o /tmp/$NS.orph </dev/null >/tmp/$NS.orphlog 2>&1 &"
sleep 2
out=$(rc_of host1 "$MIGCTL check $NS")
diag "$out"
is "$(rc "$out")" 0 "check with an orphan exits 0 (the move would wait for it)"
like "$out" "waits for: 1 closed connection" "and names the wait"
out=$(rc_of host1 "$MIGCTL migrate $NS host2")
diag "$out"
is "$(rc "$out")" 15 "migrate with an orphan that outlasts orphan-wait: 15 (refused)"
like "$out" "still owes its peer bytes after 1500 ms \(orphan-wait\)" "the refusal names the orphan and the wait"
like "$out" "10\.77\.0\.10" "and its client"
unchanged "orphan"
gx client "pkill -USR1 -x streamc; sleep 0.5"
r=$(gx client "cat /tmp/$NS.orph")
diag "orphan's client: $r"
is "$(kv "$r" resets)" 0 "the orphan's client was not reset"
is "$(kv "$r" mismatches)" 0 "and read no wrong byte"
gx client "pkill -x streamc; true"
sleep 1

# --- a handshake that does not finish: the client's last ACK is lost,
# so it counts the connection established while svc holds a request
# socket, which no dump can carry
hs_rule="table inet hs {
	chain out {
		type filter hook output priority 0;
		ip daddr $SVC4 tcp sport 40999 tcp flags & (syn | ack) == ack drop
	}
}"
check "the client drops its own ACKs from port 40999" gx client "nft -f - <<'E'
$hs_rule
E"
gx client "rm -f /tmp/$NS.hs; setsid python3 -c 'import socket, time
s = socket.socket(); s.bind((\"\", 40999)); s.connect((\"$SVC4\", 7400))
print(\"connected\", flush=True); time.sleep(120)' </dev/null >/tmp/$NS.hs 2>&1 &"
check "the client counts its connection established" \
	gx client "for i in \$(seq 100); do grep -q connected /tmp/$NS.hs && exit 0; sleep 0.1; done; exit 1"
if gx host1 "ip netns exec $NS ss -Htn state syn-recv | grep -q ':40999'"; then
	pass "svc holds it as a handshake under way (SYN_RECV)"
	out=$(rc_of host1 "$MIGCTL migrate $NS host2")
	diag "$out"
	is "$(rc "$out")" 15 "migrate with a handshake that outlasts the gate: 15 (refused)"
	like "$out" "1 handshake still under way after [0-9]+ ms.*reset after the move" "the refusal says why"
	like "$out" "10\.77\.0\.180:7400 -> 10\.77\.0\.10:40999 SYN_RECV" "and names the connection"
	unchanged "handshake"
	gx client "nft delete table inet hs"
	# untouched, the handshake finishes: the next SYN-ACK retransmission
	# (15 s after the SYN) gets its ACK through
	check "and, its ACKs let through, it finishes on svc: established" \
		gx -t 40 host1 "for i in \$(seq 300); do ip netns exec $NS ss -Htn state established | grep -q ':40999' && exit 0; sleep 0.1; done; exit 1"
else
	fail "svc holds it as a handshake under way (SYN_RECV): $(gx host1 "ip netns exec $NS ss -Htn sport = :7400 | grep 40999")"
fi
gx client "nft delete table inet hs 2>/dev/null; pkill -f '[s]\.bind'; true"

# --- urgent data pending
check "a connection with urgent data pending in svc" probe_run urgent-server 7500
gx client "setsid python3 $PROBE urgent-client $SVC4 7500 </dev/null >/tmp/$NS.urg 2>&1 &"
check "the client sent it" gx client "for i in \$(seq 100); do grep -q ready /tmp/$NS.urg && exit 0; sleep 0.1; done; exit 1"
out=$(rc_of host1 "$MIGCTL check $NS")
is "$(rc "$out")" 15 "check: 15 (refused)"
like "$out" "refused: pid [0-9]+ fd [0-9]+: tcp: urgent data pending cannot be moved" "by name: the pid, fd and why"
out=$(rc_of host1 "$MIGCTL migrate $NS host2")
is "$(rc "$out")" 15 "migrate: 15 (refused)"
like "$out" "urgent data pending" "naming the urgent data"
unchanged "urgent"
probe_stop

# --- a TCP_MD5SIG key
check "a listener with a TCP_MD5SIG key in svc" probe_run md5 7501 10.77.0.10
out=$(rc_of host1 "$MIGCTL check $NS host2")
is "$(rc "$out")" 15 "check: 15 (refused)"
like "$out" "TCP_MD5SIG keys cannot be moved" "by name"
out=$(rc_of host1 "$MIGCTL migrate $NS host2")
is "$(rc "$out")" 15 "migrate: 15 (refused)"
unchanged "md5"
probe_stop

# --- a multicast membership
check "a multicast member in svc" probe_run mcast 239.77.0.1
out=$(rc_of host1 "$MIGCTL check $NS")
is "$(rc "$out")" 15 "check: 15 (refused)"
like "$out" "multicast groups joined .*239\.77\.0\.1" "naming the group"
out=$(rc_of host1 "$MIGCTL migrate $NS host2")
is "$(rc "$out")" 15 "migrate: 15 (refused)"
unchanged "multicast"
probe_stop

# --- host2 has a svc of its own
check "host2 has a namespace svc" mc host2 "ns create $NS --addr 10.77.0.181/24"
out=$(rc_of host1 "$MIGCTL check $NS host2")
is "$(rc "$out")" 15 "check against host2: 15"
like "$out" "host host2: cannot take it: .*$NS" "host2's reason is shown"
out=$(rc_of host1 "$MIGCTL migrate $NS host2")
is "$(rc "$out")" 15 "migrate: 15 (refused)"
is "$(svc_where)" host1 "svc still runs on host1"
check "host2's own svc is deleted" mc host2 "ns delete $NS"

# --- every cause gone: the move goes through
out=$(rc_of host1 "$MIGCTL check $NS host2")
is "$(rc "$out")" 0 "check exits 0 again"
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migrate svc host2 exits 0"
is "$(svc_where)" host2 "svc runs on host2 only"
done_testing
