#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Checkpoint mode with ordinary, unfriendly traffic (issue 13): an
# unmodified /bin/cat behind migr-inetd (one cat per connection), both
# started with "migctl run --checkpoint", and clients that read slowly or
# not at all while they write (tests/workload/fillecho.py):
#  - held: two connections (IPv4, IPv6) whose client reads nothing
#    until the three moves are over: every queue on the way is full, at
#    least 1 MiB each way on the service's side, with bytes in cat's
#    own buffer and cat blocked in write(2);
#  - slow: two connections read at 30 kB/s through the moves.
# Three moves, host1 -> host2 -> host1 -> host2, each must exit 0 with
# the queues full; the same migr-inetd and the same cats go on (pid 1
# of their namespace, no adoption, no restart); then every byte each
# way must come back exactly once, in order, unchanged, with no reset.
# migr-inetd's event loop holds a unix socket pair (libevent's signal
# pipe): CRIU carries it, the engine takes the TCP sockets only.
# Then a program slow to accept, with connections in its listener's
# queue when the move starts: it gets the gate's wait to take them (1 s
# a connection: moved, both answered), and one that never accepts is
# refused by name before the freeze.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
NS=ckcat
CG=/sys/fs/cgroup/migr/$NS
SVC4=10.77.0.189
SVC6=fd00:77::189
PORT=7500
# the release build's migr-inetd (make check builds it too): CRIU cannot
# dump a program built with AddressSanitizer, whose shadow mappings of
# terabytes ask CRIU for a pagemap cache of tens of GB
INETD=$top/build/release/migrd/migr-inetd/migr-inetd
FE=$top/tests/workload/fillecho.py
MIB=1048576
HELD=$((8 * MIB))	# written on each held connection
SLOW=$((3 * MIB))	# and on each slow one
export MIG_TIMEOUT=240

teardown() {
	if [ "${T_FAIL:-0}" -gt 0 ]; then
		diag "host1 $NS.log: $(gx host1 "tail -20 /var/log/migr/$NS.log")"
		diag "host2 $NS.log: $(gx host2 "tail -20 /var/log/migr/$NS.log")"
		diag "host1 criu logs: $(gx host1 "grep -h Error /var/lib/migrd/criu-*.log 2>/dev/null | tail")"
		diag "host2 criu logs: $(gx host2 "grep -h Error /var/lib/migrd/criu-*.log 2>/dev/null | tail")"
		diag "client: $(gx client "cat /tmp/$NS.held.out /tmp/$NS.slow.out 2>/dev/null")"
	fi
	gx client "pkill -f '[f]illecho.py'; pkill -f '[s]lowacc.py client'; rm -f /tmp/$NS.*" >/dev/null 2>&1
	mig_teardown
}
trap teardown EXIT

conf() { ckpt_conf "$1" "$2" 512 -- "migrate-timeout 200" "allow $2 program $INETD"; }
setup() {
	migrd_cleanup host1 host2
	mig_wipe
	migrd_certs
	conf host1 host2
	conf host2 host1
	migrd_start host1 && migrd_start host2 && migrd_peered host1 host2
}
# the namespace's tasks on GUEST as "nspid:cmdline" lines, sorted
tasks() {
	gx "$1" "for p in \$(cat $CG/cgroup.procs); do printf '%s:%s\n' \
		\$(awk '/^NSpid/ { print \$NF }' /proc/\$p/status) \"\$(tr '\\0' ' ' </proc/\$p/cmdline)\"; done | sort -n"
}
# the service's queues on GUEST, one "recv send" line per connection
queues() {
	gx "$1" "ip netns exec $NS ss -Htn state established '( sport = :$PORT )'" | awk '{ print $1, $2 }'
}
# fe NAME CONNS BYTES RATE: a fillecho client in the background
fe() {
	gx client "rm -f /tmp/$NS.$1.*; setsid python3 $FE -n $2 -t $3 -r $4 -b $MIB -g /tmp/$NS.go \
		-q /tmp/$NS.$1.q $SVC4:$PORT '[$SVC6]:$PORT' </dev/null >/tmp/$NS.$1.out 2>&1 &"
}
# full GUEST: every held connection's queues on GUEST hold at least
# 1 MiB each way (the held ones are the two fullest)
full() {
	local q
	q=$(queues "$1" | sort -k1,1n -k2,2n | tail -2)
	diag "$1: service queues (recv send): $(tr '\n' ';' <<<"$q")"
	awk -v m=$MIB 'NF == 2 && $1 >= m && $2 >= m { n++ } END { exit n < 2 }' <<<"$q"
}
wait_full() {
	local i
	for i in $(seq 60); do
		full "$1" >/dev/null 2>&1 && return 0
		sleep 2
	done
	return 1
}

check "$INETD is built (make SAN=0 all)" test -x "$INETD"
check "migrd on host1 and host2, peered, checkpoint mode allowed both ways" setup
check "namespace $NS on host1" mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:89"
# the service's sockets start with 4 MiB buffers, as a busy server's
# autotuning would give them
gx host1 "ip netns exec $NS sysctl -qw net.ipv4.tcp_rmem='4096 4194304 6291456' net.ipv4.tcp_wmem='4096 4194304 6291456'"
check "migr-inetd and /bin/cat in checkpoint mode" mc host1 "run $NS --checkpoint -- $INETD -v -l [::]:$PORT -- /bin/cat"
check "migr-inetd listens" gx host1 \
	"for i in \$(seq 100); do ip netns exec $NS ss -Htln sport = :$PORT | grep -q . && exit 0; sleep 0.1; done; exit 1"
fe held 2 $HELD 0
fe slow 2 $SLOW 30000
sleep 3
t0=$(tasks host1)
diag "host1 tasks: $(tr '\n' ';' <<<"$t0")"
is "$(grep -c ':/bin/cat' <<<"$t0")" 4 "one cat per connection"
like "$(head -1 <<<"$t0")" "^1:.*migr-inetd" "migr-inetd is pid 1 of its namespace"

moves=0
for hop in "host1 host2" "host2 host1" "host1 host2"; do
	set -- $hop
	if wait_full "$1"; then
		pass "$1: the held connections' queues are full, at least 1 MiB each way"
	else
		full "$1"
		fail "$1: the held connections' queues did not fill"
	fi
	diag "client (held): $(gx client "cat /tmp/$NS.held.q")"
	migrate "$1" "$2"
	diag "$MOUT"
	is "$MRC" 0 "migctl migrate $NS $2 exits 0 (move $((moves + 1)))"
	[ "$MRC" = 0 ] || break
	moves=$((moves + 1))
	is "$(svc_where)" "$2" "$NS runs on $2 only"
	q=$(rep .bytes.queued)
	if [ "${q:-0}" -ge $((4 * MIB)) ]; then pass "move $moves carried $q queued bytes"; else fail "move $moves carried ${q:-0} queued bytes, expected 4 MiB or more"; fi
	t=$(tasks "$2")
	is "$t" "$t0" "$2: the same migr-inetd and the same four cats (pids in their namespace)"
	unlike "$(gx "$2" "tail -20 /var/log/migr/$NS.log")" "adopted connection" \
		"$2: nothing was restarted or adopted"
	like "$(gx "$2" "ls /var/lib/migrd/ckpt/* 2>/dev/null" | tr '\n' ' ')" "^ *$" "$2: no image left behind"
done
is "$moves" 3 "three moves with full queues"

gx client "touch /tmp/$NS.go"
for c in held slow; do
	r=$(gx -t 240 client "while pgrep -f '[f]illecho.py .*/tmp/$NS.$c.q' >/dev/null; do sleep 0.5; done; tail -1 /tmp/$NS.$c.out")
	diag "client ($c): $r"
	is "$(kv "$r" verdict)" PASS "$c: every byte came back exactly once, in order, unchanged"
	is "$(kv "$r" resets)" 0 "$c: no connection reset or closed"
	is "$(kv "$r" mismatches)" 0 "$c: no wrong byte"
done
is "$(kv "$(gx client "tail -1 /tmp/$NS.held.out")" echoed)" $((2 * HELD)) "held: $((2 * HELD)) bytes echoed"

# --- a program slow to accept: connections wait in its listener's queue
# when the move starts.  CRIU's restored listener starts empty, so the
# gate (new SYNs held back) gives the program time to accept them first;
# one that never accepts is refused, before any freeze, by name.
SLOWACC=$top/tests/workload/slowacc.py
# acc_move DELAY: a program accepting every DELAY s, two connections in
# its queue, a move host1 -> host2; $MRC, $MOUT
acc_move() {
	mc host1 "run $NS --checkpoint -- /usr/bin/python3 $SLOWACC serve 7501 $1" >/dev/null || return 1
	gx host1 "for i in \$(seq 100); do ip netns exec $NS ss -Htln sport = :7501 | grep -q . && exit 0; sleep 0.1; done; exit 1" || return 1
	gx client "rm -f /tmp/$NS.acc; setsid python3 $SLOWACC client $SVC4 7501 2 </dev/null >/tmp/$NS.acc 2>&1 &"
	sleep 0.5
	migrate host1 host2
	diag "$MOUT"
}
check "$NS gone from host2" mc host2 "ns delete $NS"
check "$NS on host1 again" mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:89"
acc_move 1
is "$MRC" 0 "a program that accepts within the gate's wait moves (0)"
like "$(gx client "for i in \$(seq 60); do [ -s /tmp/$NS.acc ] && break; sleep 0.5; done; cat /tmp/$NS.acc")" "^hi 1 hi 2$" \
	"both waiting connections were accepted and answered, across the move"
gx client "pkill -f '[s]lowacc.py client'" >/dev/null 2>&1
check "$NS gone from host2" mc host2 "ns delete $NS"
check "$NS on host1 again" mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:89"
acc_move 3600
is "$MRC" 15 "a program that never accepts: refused before the freeze (15)"
like "$MOUT" "connections still wait to be accepted" "... naming the waiting connections"
is "$(svc_where)" host1 "$NS still on host1"
done_testing
