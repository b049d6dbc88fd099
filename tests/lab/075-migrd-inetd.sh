#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# migr-inetd makes an unmodified stdin/stdout program movable: /bin/cat
# behind "migr-inetd -l [::]:7500" in namespace ined on host1 echoes
# lines for 6 client connections (IPv4 and IPv6, a line every 20 ms on
# each, tests/workload/echoc.py) while "migctl migrate" moves ined
# host1 -> host2 -> host1.  Each move holds up at least 100 of those
# small requests (sent, not yet answered, at one time); with the
# replaying lock every one is answered, and the client's longest wait
# stays within a generous bound of the downtime (the figures belong to
# tests/bench/stall.sh).  Each move restarts migr-inetd with the
# namespace's sockets, and it runs a fresh cat on every connection that
# moved.  The client must get every line back exactly once, in order,
# unchanged, with no reset, and no FIN or RST may leave port 7500 during
# the moves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
NS=ined
CG=/sys/fs/cgroup/migr/$NS
SVC4=10.77.0.185
SVC6=fd00:77::185
PORT=7500
INETD=$B/migrd/migr-inetd/migr-inetd
ECHOC=$top/tests/workload/echoc.py
CONNS=6 SECS=40
# the client's longest wait minus the longest downtime, at most: in the
# TCG lab migr-inetd's restart (light mode) alone takes up to a second
BOUND_MS=2000

inetd_start() {
	mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:85" >/dev/null &&
	mc host1 "run $NS -- $INETD -v -l [::]:$PORT -- /bin/cat" >/dev/null &&
	svc_listening host1 $PORT
}
# FIN or RST from the service's port, seen on the client
cap_start() {
	gx client "setsid tcpdump -i br0 -n -l 'tcp src port $PORT and (tcp[tcpflags] & (tcp-fin|tcp-rst) != 0)' </dev/null >/tmp/$NS.finrst 2>/dev/null &"
	sleep 1
}
cap_stop() { gx client "pkill -f 'tcpdump -i br0'; sleep 0.3; cat /tmp/$NS.finrst"; }
# the workload's log on GUEST (migrd's workload-log-dir/NS.log)
inetd_log() { gx "$1" "cat /var/log/migr/$NS.log 2>/dev/null"; }
teardown() {
	if [ "${T_FAIL:-0}" -gt 0 ]; then
		diag "host1 $NS.log: $(inetd_log host1 | tail -30)"
		diag "host2 $NS.log: $(inetd_log host2 | tail -30)"
	fi
	gx client "pkill -f '[e]choc.py'" >/dev/null 2>&1
	mig_teardown
}
trap teardown EXIT

check "migrd on host1 and host2, peered" mig_setup "commit-timeout 1000"
check "migr-inetd serving /bin/cat in $NS on host1" inetd_start
r=$(gx -t 30 client "python3 $ECHOC -n 2 -d 1 $SVC4:$PORT '[$SVC6]:$PORT'")
is "$(kv "$r" verdict)" PASS "lines echoed over IPv4 and IPv6 before any move"
gx client "rm -f /tmp/$NS.report; setsid python3 $ECHOC -n $CONNS -d $SECS -i 0.02 $SVC4:$PORT '[$SVC6]:$PORT' \
	</dev/null >/tmp/$NS.report 2>/tmp/$NS.client &"
cap_start
sleep 4
n=$(gx host1 "grep -c . $CG/cgroup.procs")
if [ "${n:-0}" -ge $((CONNS + 1)) ]; then pass "host1: migr-inetd and $CONNS cats in the cgroup ($n pids)"; else fail "host1: ${n:-0} pids in the cgroup, expected $((CONNS + 1))"; fi

# --- host1 -> host2
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migctl migrate $NS host2 exits 0"
down1=$(rep .ms.downtime); down1=${down1%.*}
n=$(rep .sockets.total)
if [ "${n:-0}" -ge $((CONNS + 1)) ]; then pass "$n sockets moved (1 listener + $CONNS connections)"; else fail "${n:-0} sockets moved, expected at least $((CONNS + 1))"; fi
is "$(svc_where)" host2 "$NS runs on host2 only"
check "migr-inetd on host2 listens in $NS" svc_listening host2 $PORT
n=$(gx host2 "ip netns exec $NS ss -Htn state established sport = :$PORT | grep -c ." 2>/dev/null)
is "$n" "$CONNS" "host2: the $CONNS connections are established in $NS"
# migr-inetd spawns the cats right after its start: give it a moment
n=$(gx host2 "for i in \$(seq 50); do n=\$(grep -c . $CG/cgroup.procs); [ \$n -ge $((CONNS + 1)) ] && break; sleep 0.1; done; echo \$n")
if [ "${n:-0}" -ge $((CONNS + 1)) ]; then pass "host2: $n pids in the cgroup (migr-inetd + $CONNS cats)"; else fail "host2: ${n:-0} pids in the cgroup, expected $((CONNS + 1))"; fi
n=$(gx host2 "for p in \$(cat $CG/cgroup.procs); do tr '\\0' ' ' </proc/\$p/cmdline; echo; done | grep -c '^/bin/cat'")
is "$n" "$CONNS" "host2: one /bin/cat per connection that moved"
like "$(inetd_log host2)" "adopted connection .*: pid [0-9]+" "host2: migr-inetd logged the adopted connections"

# --- host2 -> host1 while the client runs on
sleep 3
migrate host2 host1
diag "$MOUT"
is "$MRC" 0 "migctl migrate $NS host1 (back) exits 0"
down2=$(rep .ms.downtime); down2=${down2%.*}
is "$(svc_where)" host1 "$NS runs on host1 again, only there"
# the capture ends while the client still runs: cat closes its side as
# soon as the client closes its own, and that FIN is not a failure
sleep 1
running=$(gx client "pgrep -f '[e]choc.py -n $CONNS' >/dev/null && echo yes")
finrst=$(cap_stop)
is "$running" yes "the client still ran when the capture stopped ($SECS s were enough)"
is "$(grep -c . <<<"$finrst")" 0 "no FIN or RST from port $PORT on the LAN during the moves"
[ -z "$finrst" ] || diag "$finrst"
r=$(gx -t 120 client "while pgrep -f '[e]choc.py -n $CONNS' >/dev/null; do sleep 0.5; done; cat /tmp/$NS.report")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "client: every line echoed once, in order, unchanged, across both moves"
is "$(kv "$r" conns)" "$CONNS" "client: all $CONNS connections stayed open"
is "$(kv "$r" resets)" 0 "client: no connection reset or closed"
is "$(kv "$r" mismatches)" 0 "client: no line lost, duplicated, reordered or changed"
w=$(kv "$r" most_waiting)
if [ "${w:-0}" -ge 100 ]; then pass "client: $w requests were waiting at once, and each was answered"
else fail "client: at most ${w:-none} requests waited at once, the test wants a move to hold up 100"; fi
gap=$(kv "$r" longest_gap_ms) down=$(( ${down1:-0} > ${down2:-0} ? ${down1:-0} : ${down2:-0} ))
if [ -n "$gap" ] && [ "$down" -gt 0 ] && [ $((gap - down)) -le $BOUND_MS ]; then
	pass "client: longest wait ${gap} ms, within $BOUND_MS ms of the longest downtime (${down} ms)"
else fail "client: longest wait ${gap:-?} ms against downtimes ${down1:-?} and ${down2:-?} ms (bound $BOUND_MS)"; fi
[ "$(kv "$r" verdict)" = PASS ] || diag "client log: $(gx client "tail -20 /tmp/$NS.client")"
r=$(gx -t 30 client "python3 $ECHOC -n 2 -d 2 $SVC4:$PORT '[$SVC6]:$PORT'")
diag "fresh: $r"
is "$(kv "$r" verdict)" PASS "new connections are echoed on host1 after the moves"
done_testing
