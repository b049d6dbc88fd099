#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Light mode carries a program's sockets, not its memory: a task frozen
# between its read and its write would take what it read to its death,
# acknowledged to the client and never sent again.  The source locks the
# traffic first and freezes only once every task that holds a socket
# waits for input (settle-wait); a task that does not is refused by
# name, and nothing is lost.  migr-inetd runs tests/workload/holdline.sh,
# a filter that holds each line a while (in /bin/sleep) before it writes
# it back, in namespace hold on host1:
#  - it holds each line 0.3 s, a client sends a line every 0.5 s on two
#    connections: each move finds a line held about half the time; the
#    source waits for it, and two moves (host1 -> host2 -> host1) must
#    leave every line echoed exactly once, in order;
#  - it holds a line 8 s: "migctl migrate" is refused (exit 15) after
#    settle-wait, naming the sleep and its system call; the namespace
#    stays on host1 and the line comes back;
#  - it is /bin/cat and its client writes 4 MiB without reading: cat is
#    blocked in write(2) with bytes it read; refused, naming the write,
#    and every byte comes back once the client reads;
#  - it holds one line 3 s, writes it back and closes, while the source
#    waits, locked: the connection it closed owes its client that line
#    and its FIN, and has no file to move.  It is let through the lock,
#    delivers them, and the move goes on (exit 0).
# settle-wait is 4 s here, so the last one's 3 s fit in it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
NS=hold
SVC4=10.77.0.192
SVC6=fd00:77::192
PORT=7500
INETD=$B/migrd/migr-inetd/migr-inetd
ECHOC=$top/tests/workload/echoc.py
FE=$top/tests/workload/fillecho.py
HL=/tmp/holdline.sh HF=/tmp/holdline.secs
MIB=1048576

# hold GUEST WHAT: what holdline.sh does on GUEST from its next start
hold() { gx "$1" "echo $2 > $HF"; }
# holding: holdline.sh holds a line on host1 (its /bin/sleep runs)
holding() {
	gx host1 "for i in \$(seq 50); do for p in \$(ip netns pids $NS); do [ \"\$(cat /proc/\$p/comm)\" = sleep ] && exit 0; done; sleep 0.1; done; exit 1"
}
start() {
	local g
	for g in host1 host2; do
		gx "$g" "install -m 755 $top/tests/workload/holdline.sh $HL" || return 1
	done
	hold host1 0.3 && hold host2 0.3 &&
	mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:92" >/dev/null &&
	mc host1 "run $NS -- $INETD -v -l [::]:$PORT -- /bin/sh $HL $HF" >/dev/null &&
	svc_listening host1 $PORT
}
teardown() {
	if [ "${T_FAIL:-0}" -gt 0 ]; then
		diag "host1 $NS.log: $(gx host1 "tail -20 /var/log/migr/$NS.log")"
		diag "host2 $NS.log: $(gx host2 "tail -20 /var/log/migr/$NS.log")"
	fi
	gx client "pkill -f '[e]choc.py'; pkill -f '[f]illecho.py'" >/dev/null 2>&1
	mig_teardown
}
trap teardown EXIT

check "migrd on host1 and host2, peered" mig_setup "settle-wait 4000"
check "migr-inetd serving holdline.sh (0.3 s a line) in $NS on host1" start

# --- a line held 0.3 s: the source waits for it
gx client "rm -f /tmp/$NS.report; setsid python3 $ECHOC -n 2 -d 20 -i 0.5 $SVC4:$PORT '[$SVC6]:$PORT' \
	</dev/null >/tmp/$NS.report 2>/tmp/$NS.client &"
sleep 3
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migrate $NS host2 with lines held 0.3 s: exit 0"
like "$MOUT" "tasks waiting for input after [0-9.]+ ms" "the source waited for the tasks to rest, locked, before the freeze"
is "$(svc_where)" host2 "$NS runs on host2 only"
check "migr-inetd on host2 listens" svc_listening host2 $PORT
sleep 2
migrate host2 host1
diag "$MOUT"
is "$MRC" 0 "migrate $NS host1 (back): exit 0"
is "$(svc_where)" host1 "$NS runs on host1 again"
r=$(gx -t 60 client "while pgrep -f '[e]choc.py -n 2' >/dev/null; do sleep 0.5; done; cat /tmp/$NS.report")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "client: every line echoed once, in order, across both moves"
is "$(kv "$r" resets)" 0 "client: no connection reset"
is "$(kv "$r" mismatches)" 0 "client: no line lost, duplicated or changed"

# --- a line held 8 s: refused, by name, before the freeze
hold host1 8
gx client "rm -f /tmp/$NS.held; setsid python3 $ECHOC -n 1 -d 1 -i 5 $SVC4:$PORT </dev/null >/tmp/$NS.held 2>&1 &"
check "the line is held (a sleep in $NS)" holding
migrate host1 host2
diag "$MOUT"
is "$MRC" 15 "migrate while a task holds a line: 15 (refused)"
like "$MOUT" "pid [0-9]+ \\(sleep\\) is blocked in clock_nanosleep after [0-9]+ ms \\(settle-wait\\)" \
	"the refusal names the task and what it does"
like "$MOUT" "checkpoint mode" "the refusal says what would move it"
is "$(svc_where)" host1 "$NS stays on host1"
r=$(gx -t 30 client "while pgrep -f '[e]choc.py -n 1' >/dev/null; do sleep 0.5; done; cat /tmp/$NS.held")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "client: the held line came back"

# --- /bin/cat whose client does not read: cat blocked in write(2)
hold host1 cat
gx client "rm -f /tmp/$NS.fe* /tmp/$NS.go; setsid python3 $FE -n 1 -t $((4 * MIB)) -r 0 -g /tmp/$NS.go \
	-q /tmp/$NS.fe.q $SVC4:$PORT </dev/null >/tmp/$NS.fe.out 2>&1 &"
check "cat is blocked in write(2)" gx host1 \
	"for i in \$(seq 100); do for p in \$(ip netns pids $NS); do [ \"\$(cat /proc/\$p/comm)\" = cat ] && \
		[ \"\$(cut -d' ' -f1 /proc/\$p/syscall)\" = 1 ] && exit 0; done; sleep 0.2; done; exit 1"
migrate host1 host2
diag "$MOUT"
is "$MRC" 15 "migrate while cat is blocked writing to a client that does not read: 15 (refused)"
like "$MOUT" "pid [0-9]+ \\(cat\\) is blocked in write" "the refusal names cat and its write"
is "$(svc_where)" host1 "$NS stays on host1"
gx client "touch /tmp/$NS.go"
r=$(gx -t 120 client "while pgrep -f '[f]illecho.py' >/dev/null; do sleep 0.5; done; tail -1 /tmp/$NS.fe.out")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "client: every byte came back once, in order"
is "$(kv "$r" echoed)" $((4 * MIB)) "client: 4 MiB echoed"

# --- a connection closed while locked, owing its client a line and a FIN
hold host1 "once 3"
gx client "rm -f /tmp/$NS.once; setsid sh -c '(echo held-then-closed; sleep 12) | socat - TCP:$SVC4:$PORT >/tmp/$NS.once 2>&1' </dev/null >/dev/null 2>&1 &"
check "the line is held" holding
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migrate while the filter will close its connection: exit 0"
like "$MOUT" "1 connection closed while locked, let through to deliver its last bytes" \
	"the closed connection was let through the lock"
like "$MOUT" "connections closed while locked delivered their last bytes" "and it delivered them before the freeze"
is "$(svc_where)" host2 "$NS runs on host2 only"
is "$(gx -t 20 client "for i in \$(seq 100); do grep -q . /tmp/$NS.once && break; sleep 0.1; done; cat /tmp/$NS.once")" held-then-closed \
	"client: the line came back before the close"
done_testing
