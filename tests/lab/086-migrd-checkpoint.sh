#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Checkpoint mode through migrd (issue 13): "migctl run NS --checkpoint"
# starts an unmodified redis-server (Debian's; its whole data set lives in
# its memory: no snapshot, no append-only file) as pid 1 of a pid
# namespace of its own, as the workload user; "migctl migrate" then moves
# it with its memory, by CRIU, host1 -> host2 -> host1 -> host2, while a
# client (tests/workload/kvc.py) writes keys over persistent connections
# and reads them back.  Every acknowledged write must be readable after
# the moves, no connection may break, and the server must be the same
# process (the run_id it drew at its start, an uptime that went on); its
# output must still reach its log on the new host; the restored tree must
# run as the workload user, pid 1 of its namespace.
# A process tree moves too: a shell, its two children and a pipe between
# them (tests/workload/pipetally.py), there and back, the numbers in the
# pipe and in both programs' memory going on with no gap.
# So does a UDP program (tests/workload/udpkeep.py) with datagrams waiting
# unread in a bound and in a connected socket: CRIU would drop them, the
# engine carries them; a failed hand-over rolls back with them still
# there; every number arrives once, in order, to the same process.
# Each move copies redis's memory while it runs first (pre-copy), and the
# dump in the freeze takes only what changed since.
# Then failures: CRIU's restore failing on the destination, and CRIU's
# dump or pre-dump failing on the source, must each leave redis serving
# where it was
# with its data, and nothing of it on the other host, no images left.
# migrd dying on the source while its criu pre-dumps or dumps must leave
# redis running there, thawed, with its data: criu is not killed with it.
# Last, a host that does not allow the peer checkpoint mode refuses it by
# name.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
NS=ckpt
CG=/sys/fs/cgroup/migr/$NS
SVC4=10.77.0.187
PORT=6379
# redis-tools holds the server (redis-check-rdb, which is redis-server
# when called so): a link by that name on both hosts
RS=/tmp/redis-server
KVC=$top/tests/workload/kvc.py

teardown() {
	if [ "${T_FAIL:-0}" -gt 0 ]; then
		diag "host1 $NS.log: $(gx host1 "tail -20 /var/log/migr/$NS.log")"
		diag "host2 $NS.log: $(gx host2 "tail -20 /var/log/migr/$NS.log")"
		diag "host1 criu logs: $(gx host1 "grep -h Error /var/lib/migrd/criu-*.log 2>/dev/null | tail")"
		diag "host2 criu logs: $(gx host2 "grep -h Error /var/lib/migrd/criu-*.log 2>/dev/null | tail")"
	fi
	gx client "touch /tmp/$NS.stop; pkill -f '[k]vc.py'" >/dev/null 2>&1
	mig_teardown
	wipe_ns tree udpk
}
trap teardown EXIT

setup() {
	migrd_cleanup host1 host2
	mig_wipe
	migrd_certs
	ckpt_conf host1 host2 256
	ckpt_conf host2 host1 256
	gx host1 "ln -sf /usr/bin/redis-check-rdb $RS" && gx host2 "ln -sf /usr/bin/redis-check-rdb $RS" &&
	migrd_start host1 && migrd_start host2 && migrd_peered host1 host2
}
# the program's pid on GUEST: the one task of the cgroup (not the log
# keeper's, below it)
prog_pid() { gx "$1" "head -1 $CG/cgroup.procs"; }
images_left() {
	gx host1 "ls /var/lib/migrd/ckpt 2>/dev/null"; gx host2 "ls /var/lib/migrd/ckpt 2>/dev/null"
}
criu_tables() { gx "$1" "ip netns exec $NS nft list tables 2>/dev/null | grep -c CRIU"; }
# kvc_start SECONDS: the client, in the background, until /tmp/ckpt.stop
kvc_start() {
	gx client "rm -f /tmp/$NS.stop /tmp/$NS.kvc; setsid python3 $KVC -n 4 -d $1 -s /tmp/$NS.stop $SVC4 $PORT \
		</dev/null >/tmp/$NS.kvc 2>&1 &"
}
kvc_report() {
	gx client "touch /tmp/$NS.stop"
	gx -t 120 client "while pgrep -f '[k]vc.py' >/dev/null; do sleep 0.3; done; cat /tmp/$NS.kvc"
}
# a write and a read on a new connection
kv_probe() { gx client "redis-cli -h $SVC4 -p $PORT set probe-$1 $1 >/dev/null && redis-cli -h $SVC4 -p $PORT get probe-$1"; }

check "migrd on host1 and host2, peered, checkpoint mode allowed both ways" setup
check "namespace $NS on host1" mc host1 "ns create $NS --addr $SVC4/24 --mac 52:54:00:77:01:87"
out=$(mc host1 "run $NS --checkpoint -- $RS --port $PORT --bind 0.0.0.0 --protected-mode no \
	--save \"\" --appendonly no --dir /tmp --daemonize no; echo rc=\$?")
diag "$out"
like "$out" "in checkpoint mode" "migctl run --checkpoint starts redis-server in checkpoint mode"
check "redis listens in $NS on host1" gx host1 \
	"for i in \$(seq 100); do ip netns exec $NS ss -Htln sport = :$PORT | grep -q . && exit 0; sleep 0.1; done; exit 1"
pid=$(prog_pid host1)
st=$(gx host1 "grep -E '^(NSpid|Uid|NoNewPrivs)' /proc/$pid/status | tr '\t' ' '")
diag "host1: pid $pid: $st"
like "$st" "NSpid: $pid 1" "redis is pid 1 of a pid namespace of its own"
like "$st" "Uid: 65534 65534 65534 65534" "redis runs as nobody"
is "$(gx host1 "nsenter -t $pid -m -p sh -c 'readlink /proc/1/exe'")" /usr/bin/redis-check-rdb \
	"its own /proc shows it as pid 1"
out=$(mc host1 "run $NS -- /bin/sleep 100 2>&1; echo rc=\$?")
like "$out" "checkpointed: it must be the only program there" \
	"no second program beside a checkpointed one"
like "$out" "rc=14$" "... refused with 14 (a limit)"
is "$(kv_probe 0)" 0 "redis answers before any move"
# migctl check: criu check, and a dry pre-dump of the running program
out=$(mc host1 "check $NS host2 2>&1; echo rc=\$?")
diag "$out"
like "$out" "rc=0$" "migctl check: CRIU can take redis here (criu check, a dry pre-dump)"
is "$(kv_probe 00)" 00 "redis answers after the dry pre-dump"
is "$(gx host1 "ls /var/lib/migrd/ckpt 2>/dev/null")" "" "the dry pre-dump left no image"

kvc_start 900
sleep 3
moves=0
for hop in "host1 host2" "host2 host1" "host1 host2"; do
	set -- $hop
	migrate "$1" "$2"
	diag "$MOUT"
	is "$MRC" 0 "migctl migrate $NS $2 exits 0 (move $((moves + 1)))"
	[ "$MRC" = 0 ] || break
	moves=$((moves + 1))
	is "$(svc_where)" "$2" "$NS runs on $2 only"
	p=$(prog_pid "$2")
	st=$(gx "$2" "grep -E '^(NSpid|Uid|NoNewPrivs|State)' /proc/$p/status | tr '\t' ' '")
	diag "$2: pid $p: $st"
	like "$st" "NSpid: $p 1" "$2: the restored redis is pid 1 of its pid namespace"
	like "$st" "Uid: 65534 65534 65534 65534" "$2: it runs as nobody"
	like "$st" "NoNewPrivs: 1" "$2: with no_new_privs"
	like "$st" "State: [RS]" "$2: it runs (not stopped)"
	like "$(gx "$2" "ls /var/lib/migrd/ckpt 2>/dev/null; ls /var/lib/migrd/ckpt/* 2>/dev/null" | tr '\n' ' ')" "^ *$" \
		"$2: no image left behind"
	is "$(criu_tables "$2")" 0 "$2: no CRIU lock table in $NS"
	is "$(kv_probe "$moves")" "$moves" "$2: a new connection writes and reads"
	# its output goes on into the log there: SAVE says so on stdout
	gx client "redis-cli -h $SVC4 -p $PORT save >/dev/null"
	like "$(gx "$2" "tail -2 /var/log/migr/$NS.log")" "DB saved on disk" \
		"$2: redis's output reaches its log there"
	sleep 2
done
is "$moves" 3 "three moves"
like "$(jq -c .checkpoint <<<"$MREP")" '"images":[1-9]' "the report counts CRIU's images"
# memory pre-copy (checkpoint-precopy 4, the default): redis's memory went
# while it ran; the dump in the freeze took only what it wrote since
p1=$(rep '.checkpoint.precopy[0].memory')
pd=$(rep '.checkpoint.memory')
diag "pre-copy: $(jq -c '.checkpoint' <<<"$MREP")"
if [ "${p1:-0}" -gt 1048576 ] && [ -n "$pd" ] && [ "$pd" -lt "$p1" ]; then
	pass "pre-copy: pass 1 copied $p1 bytes of memory while redis ran, the dump $pd"
else
	fail "pre-copy: pass 1 copied ${p1:-nothing}, the dump ${pd:-nothing}"
fi
like "$MOUT" "pre-copy +[0-9]+ +bytes of memory copied in pass 1" "migctl shows the passes"

r=$(kvc_report)
diag "client: $r"
is "$(kv "$r" verdict)" PASS "every acknowledged write readable, the connections held, the same server"
is "$(kv "$r" resets)" 0 "client: no connection broke"
is "$(kv "$r" wrong)" 0 "client: no value wrong"
is "$(kv "$r" missing)" 0 "client: no key missing"
is "$(kv "$r" run_id_end)" "$(kv "$r" run_id_start)" "client: the same run_id before and after (the same process)"
diag "longest wait for an answer: $(kv "$r" longest_wait_ms) ms; uptime $(kv "$r" uptime_start) s, then $(kv "$r" uptime_end) s"

# --- a process tree: sh, two children, a pipe between them
TREE=tree TREE4=10.77.0.188 TP=/tmp/pipetally.py
tally() { gx client "python3 -c \"import socket; print(socket.create_connection(('$TREE4', 7001), timeout=30).makefile().readline().strip())\""; }
tree_where() { NS=$TREE svc_where; }
check "namespace $TREE on host1" mc host1 "ns create $TREE --addr $TREE4/24 --mac 52:54:00:77:01:88"
gx host1 "install -m 644 $top/tests/workload/pipetally.py $TP"
# the shell holds a file open (fd 7): readable by anyone on host1, by
# root only on host2 at first
TF=/tmp/ckpt-tree.data
gx host1 "echo same bytes > $TF; chmod 644 $TF"
gx host2 "echo same bytes > $TF; chmod 600 $TF"
check "sh -c 'produce | serve' in $TREE, checkpoint mode" mc host1 \
	"run $TREE --checkpoint -- /bin/sh -c 'exec 7<$TF; python3 -u $TP produce | python3 -u $TP serve 7001'"
check "the tree serves" gx client "for i in \$(seq 50); do python3 -c \"import socket; socket.create_connection(('$TREE4', 7001), timeout=2)\" 2>/dev/null && exit 0; sleep 0.2; done; exit 1"
is "$(gx host1 "grep -c . /sys/fs/cgroup/migr/$TREE/cgroup.procs")" 3 "three tasks: the shell and its two children"
t0=$(tally)
diag "before: $t0"
# host2 must refuse a restored program holding a file its workload user
# could not open there
NS=$TREE migrate host1 host2
diag "$MOUT"
is "$MRC" 16 "the tree holding a file nobody may read on host2: rolled back (16)"
# (CRIU 3.17 refuses to open it itself: its first error, which migctl
# shows, is "File tmp/ckpt-tree.data has bad mode 0100600 (expect
# 0100644)", then "Unable to open fd=7"; had it opened it, migrd's file
# check would refuse: "fd 7: FILE is open for reading, which the
# workload user could not do", test_filecheck)
like "$MOUT" "File /?${TF#/} has bad mode|Unable to open fd=7|not fit to run here: pid [0-9]+ fd 7: $TF is open for reading, which the workload user could not do" \
	"... naming the file"
is "$(tree_where)" host1 "$TREE still runs on host1 only"
gx host2 "chmod 644 $TF"
for hop in "host1 host2" "host2 host1"; do
	set -- $hop
	NS=$TREE migrate "$1" "$2"
	diag "$MOUT"
	is "$MRC" 0 "the tree moves $1 -> $2"
	is "$(tree_where)" "$2" "$TREE runs on $2 only"
	is "$(gx "$2" "grep -c . /sys/fs/cgroup/migr/$TREE/cgroup.procs")" 3 "$2: the same three tasks"
	is "$(gx "$2" "for p in \$(cat /sys/fs/cgroup/migr/$TREE/cgroup.procs); do awk '/^NSpid/ { print \$NF }' /proc/\$p/status; done | sort -n | head -1")" 1 \
		"$2: the shell is still pid 1 of its namespace"
	sleep 1
	t1=$(tally)
	diag "$2: $t1"
	if [ "$(kv "$t1" gaps)" = 0 ] && [ "$(kv "$t1" last)" -gt "$(kv "$t0" last)" ] 2>/dev/null &&
	    [ "$(kv "$t1" lines)" = "$(kv "$t1" last)" ]; then
		pass "$2: the numbers went on through the pipe, none lost ($(kv "$t0" last), then $(kv "$t1" last))"
	else
		fail "$2: the pipe's numbers: $t0, then $t1"
	fi
	t0=$t1
done

# --- UDP: the datagrams waiting in the program's sockets move with it
U=udpk U4=10.77.0.189 UP=7002 UK=/tmp/udpkeep.py UF=/tmp/udpk.go
udp_where() { NS=$U svc_where; }
usend() { gx client "python3 $UK send $U4 $1 $2 $3 ${4:-}"; }	# PORT FROM TO [SRCPORT]
uask() { gx client "python3 $UK ask $U4 $1 ${2:-}"; }		# PORT [SRCPORT]
# the memory that holds what waits in the receive queues of its UDP sockets on GUEST
uqueued() { gx "$1" "ip netns exec $U ss -Huan | awk '{ s += \$2 } END { print s + 0 }'"; }
# ask both sockets; expect N1 and N2 numbers, in order, from the same process
uexpect() {	# WHAT N1 N2
	local a b
	a=$(uask $UP) b=$(uask $((UP + 1)) 7003)
	diag "$1: bound socket: $a; connected socket: $b"
	like "$a" "^token=$utok n=$2 ok=1 last=$2$" "$1: the bound socket got 1..$2, each once, in order, in the same process"
	like "$b" "^token=$utok n=$3 ok=1 last=$3$" "$1: the connected socket got 1..$3 from its peer, and answers it"
}
gx client "install -m 644 $top/tests/workload/udpkeep.py $UK"
gx host1 "install -m 644 $top/tests/workload/udpkeep.py $UK; touch $UF"
gx host2 "rm -f $UF"
check "namespace $U on host1" mc host1 "ns create $U --addr $U4/24 --mac 52:54:00:77:01:89"
check "udpkeep.py in $U, checkpoint mode" mc host1 \
	"run $U --checkpoint -- /usr/bin/python3 -u $UK serve $UP $UF ${GADDR[client]} 7003"
check "it is bound" gx host1 \
	"for i in \$(seq 100); do ip netns exec $U ss -Huan sport = :$((UP + 1)) | grep -q . && exit 0; sleep 0.1; done; exit 1"
usend $UP 1 51 && usend $((UP + 1)) 1 31 7003
utok=$(kv "$(uask $UP)" token)
[ -n "$utok" ] || utok=none
uexpect "before any move" 50 30
# it stops reading: what comes now waits in its sockets
gx host1 "rm -f $UF"
sleep 0.5
usend $UP 51 171 && usend $((UP + 1)) 31 91 7003
q=$(uqueued host1)
diag "host1: $q bytes wait in $U's UDP sockets"
if [ "$q" -gt 0 ] 2>/dev/null; then pass "datagrams wait unread in the program's sockets"; else fail "nothing waits: $q"; fi
# the hand-over failing on host2: a rollback, the datagrams still there
check "migrd on host2 with fault dst-ckpt-handover" restart host2 dst-ckpt-handover
NS=$U migrate host1 host2
diag "$MOUT"
is "$MRC" 16 "the hand-over failing on host2: rolled back (16)"
is "$(udp_where)" host1 "$U still runs on host1 only"
is "$(uqueued host1)" "$q" "host1: the same bytes still wait in its sockets"
check "migrd on host2 without faults" restart host2
NS=$U migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "$U moves host1 -> host2 with $q bytes of datagrams unread"
is "$(udp_where)" host2 "$U runs on host2 only"
# (ss counts the buffers that hold them: not the same figure there)
q2=$(uqueued host2)
if [ "$q2" -gt 0 ] 2>/dev/null; then pass "host2: datagrams wait unread in its sockets there ($q2)"; else fail "host2: nothing waits: $q2"; fi
gx host2 "touch $UF"
uexpect "host2" 170 90
gx host2 "rm -f $UF"
sleep 0.5
usend $UP 171 251 && usend $((UP + 1)) 91 131 7003
NS=$U migrate host2 host1
diag "$MOUT"
is "$MRC" 0 "$U moves back host2 -> host1, datagrams unread again"
gx host1 "touch $UF"
uexpect "host1" 250 130
check "both hosts settle" settled
is "$(images_left | tr -d '\n')" "" "no images left on either host"

# --- failures before the commit point: the program goes on where it was
fail_move() {	# FAULT-GUEST FAULT WHAT REASON [EXIT]
	local g=$1 f=$2 what=$3 p0 rc=${5:-16}
	check "migrd on $g with fault $f" restart "$g" "$f"
	p0=$(prog_pid host2)
	kvc_start 900
	sleep 2
	migrate host2 host1
	diag "$MOUT"
	is "$MRC" "$rc" "$what: migctl migrate exits $rc (16 rolled back, 15 refused before the freeze)"
	like "$MOUT" "$4" "$what: the reason is given"
	is "$(svc_where)" host2 "$what: $NS still runs on host2 only"
	is "$(prog_pid host2)" "$p0" "$what: the same process goes on on host2"
	like "$(gx host2 "grep State /proc/$p0/status")" "State:.[RS]" "$what: it runs (not left stopped)"
	is "$(criu_tables host2)" 0 "$what: CRIU's lock table is gone from $NS"
	check "$what: both hosts settle, no migration left" settled
	is "$(images_left | tr -d '\n')" "" "$what: no images left on either host"
	r=$(kvc_report)
	diag "client: $r"
	is "$(kv "$r" verdict)" PASS "$what: every write readable, the connections held, the same server"
	check "migrd on $g without faults" restart "$g"
}
fail_move host1 dst-ckpt-restore "CRIU's restore fails on host1" "fault injected: dst-ckpt-restore"
fail_move host2 src-ckpt-dump "CRIU's dump fails on host2" "CRIU could not dump.*fault injected: src-ckpt-dump"
fail_move host2 src-ckpt-predump "CRIU's pre-dump fails on host2" "CRIU could not copy the memory of $NS \\(pass 1\\).*fault injected: src-ckpt-predump" 15
is "$(kv_probe 9)" 9 "redis still answers on host2"

# --- host2's migrd dies while its criu pre-dumps or dumps redis: criu
# goes on to its end (killing it with its parasite inside redis would
# kill redis), the restarted migrd waits for it, then rolls back
crash_move() {	# FAULT WHAT
	local p0 st
	check "$2: migrd on host2 will die" restart host2 "$1"
	p0=$(prog_pid host2)
	kvc_start 900
	sleep 2
	migrate host2 host1
	check "$2: it did die" gx host2 "for i in \$(seq 50); do pgrep -x migrd >/dev/null || exit 0; sleep 0.1; done; exit 1"
	check "$2: host2's migrd starts again, without the fault" restart host2
	check "$2: both hosts settle, no migration left" settled
	is "$(svc_where)" host2 "$2: $NS still runs on host2 only"
	is "$(prog_pid host2)" "$p0" "$2: the same redis"
	st=$(gx host2 "grep State /proc/$p0/status; grep frozen $CG/cgroup.events")
	like "$st" "State:.[RS]" "$2: running, not left stopped"
	like "$st" "frozen 0" "$2: thawed"
	is "$(criu_tables host2)" 0 "$2: no CRIU lock table"
	is "$(images_left | tr -d '\n')" "" "$2: no images left on either host"
	r=$(kvc_report)
	diag "client: $r"
	is "$(kv "$r" verdict)" PASS "$2: every write readable, the connections held"
}
crash_move src-crash-predump "death during pre-copy"
crash_move src-crash-ckpt-dump "death during CRIU's dump"
is "$(kv_probe 10)" 10 "redis still answers on host2"
check "migrd on host2 with fault src-ckpt-predump" restart host2 src-ckpt-predump
out=$(mc host2 "check $NS host1 2>&1; echo rc=\$?")
diag "$out"
like "$out" "rc=15$" "migctl check: a program CRIU cannot pre-dump is refused (15)"
like "$out" "CRIU cannot take the program: fault injected: src-ckpt-predump" "... naming CRIU's failure"
check "migrd on host2 without faults" restart host2

# --- policy: without "allow host2 checkpoint", host1 refuses by name
migrd_stop host1
ckpt_conf host1 host2
check "migrd on host1 again, without checkpoint mode for host2" migrd_start host1
check "peered again" migrd_peered host1 host2
migrate host2 host1
diag "$MOUT"
is "$MRC" 15 "host1 refuses a checkpointed program from host2 (15)"
like "$MOUT" "host2 may not move checkpointed programs to host1" "... and says why"
is "$(svc_where)" host2 "$NS still runs on host2 only"
done_testing
