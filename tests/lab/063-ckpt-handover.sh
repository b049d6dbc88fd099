#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Checkpoint mode's hand-over (issue 13), by hand across two hosts: the
# engine moves the sockets, CRIU moves the process with its memory, and
# fdput puts each restored socket where the program left it.
#
# tallyd (tests/workload/tallyd.py: its counts live only in memory, its
# sockets in an epoll loop; nothing in it knows of migr) runs on host1 in
# namespace c3, as pid 1 of a pid namespace of its own, so that its pids
# are free on host2.  A client keeps one connection busy.  Then, as
# migrd's checkpoint mode will: migtool freezes, locks and dumps the
# sockets (its copies stay in repair); `criu dump --tcp-close` takes the
# process and keeps only each socket's addresses; migtool rebuilds c3 on
# host2, restores the sockets and runs a script there that restores the
# process (`criu restore -s --tcp-close`: a closed placeholder at each
# socket's number), runs the check of every restored task against local
# policy (here it must say no: this tallyd is root, see below), and has
# ckpttool replace each placeholder with the engine's socket, epoll
# interest included, before the process goes on.
# The client's counts must go on with no answer wrong and the connection
# never broken; a new connection after the move must see the total that
# was in the old process's memory; the listener must be CRIU's own.
#
# Not yet migrd's flow: CRIU's dump kills the process before the commit
# point here, so a failed restore could not roll back (checkpoint mode
# keeps it frozen until the commit); the images go through the lab's
# shared folder rather than the peer channel.
. "$(dirname "$0")/../lib.sh"

T=$B/tests/tools/migtool
CK=$B/tests/tools/ckpttool
TD=$top/tests/workload/tallyd.py
TC=$top/tests/workload/tallyc.py
CG=/sys/fs/cgroup/c3
SH=${MIGR_LAB:-/run/migr-lab}/share
IMG=/mnt/lab/c3.img
ADDR=10.77.0.193
cleanup() {
	for g in host1 host2; do
		gx "$g" "pkill -f 'migtool (source|dest) c3 '; echo 1 > $CG/cgroup.kill 2>/dev/null
			for i in \$(seq 50); do grep -qs 'populated 1' $CG/cgroup.events || break; sleep 0.1; done
			rmdir $CG 2>/dev/null
			ip netns pids c3 2>/dev/null | xargs -r kill -9; ip netns del c3 2>/dev/null
			ip link del vc3 2>/dev/null; rm -f /tmp/c3.*; true" >/dev/null 2>&1
	done
	gx client "kill \$(cat /tmp/c3.cpid); rm -f /tmp/c3.*" >/dev/null 2>&1
	rm -rf "$SH"/c3.*
}
trap cleanup EXIT
cleanup

check "namespace c3 on host1" service_ns host1 c3 $ADDR/24 fd00:77::193/64 52:54:00:77:01:93
# unshare's child is tallyd, pid 1 of its pid namespace and the leader
# of a session there (CRIU wants the whole session inside); unshare
# waits.  It runs as root: CRIU refuses to dump an unprivileged task in
# a pid namespace of its own unless that task has a /proc of its own
# ("can't dump unprivileged task whose /proc doesn't belong to it"),
# that is a mount namespace too, which checkpoint mode is to bring
check "tallyd in c3, cgroup c3, its own pid namespace" gx host1 "mkdir $CG && setsid sh -c 'echo \$\$ > $CG/cgroup.procs;
	exec nsenter --net=/run/netns/c3 unshare --pid --fork setsid python3 $TD 0.0.0.0 7000' </dev/null >/dev/null 2>&1 &
	for i in \$(seq 50); do ip netns exec c3 ss -Htln sport = :7000 | grep -q . && exit 0; sleep 0.1; done; exit 1"
gx client "rm -f /tmp/c3.stop; setsid python3 $TC $ADDR 7000 600 /tmp/c3.stop </dev/null >/tmp/c3.client 2>&1 &
	echo \$! > /tmp/c3.cpid"
sleep 3
pid=$(gx host1 "ip netns exec c3 ss -Htlnp sport = :7000" | sed -n 's/.*pid=\([0-9]*\),fd=.*/\1/p' | head -1)
diag "tallyd: pid $pid on host1"
# where tallyd holds each connection: peer port -> descriptor number
gx host1 "ip netns exec c3 ss -Htnp state established sport = :7000" |
	sed -n 's/.*:\([0-9]*\) *users:.*fd=\([0-9]*\)).*/\1 \2/p' > "$SH/c3.map"
diag "connections (peer port, fd): $(tr '\n' ' ' < "$SH/c3.map")"
is "$(grep -c . "$SH/c3.map")" 1 "tallyd holds the client's connection"
before=$(gx client "python3 $TC $ADDR 7000 1" | sed -n 's/.*last_total=\([0-9]*\).*/\1/p')
diag "the total in tallyd's memory before the move: $before"

# --- the script host2 runs in c3 once its sockets are restored and live
# (migtool dest gives them as LISTEN_FDS): the listener is closed (CRIU
# restores its own), the process restored stopped, each connection put
# at its number, then the process goes on
cat > "$SH/c3.restore" <<EOS
#!/bin/bash
exec 2>/tmp/c3.restore.err
i=3 args=
IFS=: read -ra names <<<"\$LISTEN_FDNAMES"
for name in "\${names[@]}"; do
	case \$name in
	listen-*) eval "exec \$i>&-" ;;
	conn-*) t=\$(awk -v p="\${name##*-}" '\$1 == p { print \$2 }' /mnt/lab/c3.map)
		[ -n "\$t" ] && args="\$args \$i:\$t" ;;
	esac
	i=\$((i + 1))
done
echo "hand-over: \$args" >&2
# migtool closes its own copy of the listener once this script runs
for i in \$(seq 50); do ss -Htln sport = :7000 | grep -q . || break; sleep 0.1; done
cd / && criu restore -D $IMG -o restore.log -v4 -d -s --tcp-close --manage-cgroups=ignore \\
	--pidfile /tmp/c3.pid --inherit-fd 'fd[200]:c3net' 200</proc/self/ns/net || { echo restore failed >&2; exit 1; }
p=\$(cat /tmp/c3.pid)
# checkpoint mode kills the tree here; this root tallyd goes on
$CK check \$p 65534 65534; echo "check: rc=\$?" >&2
$CK put \$p \$args || { echo fdput failed >&2; kill -9 \$p; exit 1; }
kill -CONT \$p
echo "restored: pid \$p" >&2
EOS
chmod +x "$SH/c3.restore"

# --- the move
gx host1 "setsid $T source c3 $CG vc3 /mnt/lab/c3.rec /mnt/lab/c3.decision </dev/null >/tmp/c3.src 2>&1 &"
check "host1 froze c3 and dumped its sockets" gx host1 \
	"for i in \$(seq 100); do [ -e /mnt/lab/c3.rec ] && exit 0; sleep 0.1; done; cat /tmp/c3.src; exit 1"
out=$(gx -t 120 host1 "mkdir -p $IMG && criu dump -t $pid -D $IMG -o dump.log -v4 --tcp-close \
	--freeze-cgroup $CG --network-lock nftables --external net[\$(stat -L -c %i /run/netns/c3)]:c3net &&
	echo dumped; grep -B4 -m3 Error $IMG/dump.log")
diag "$out"
like "$out" "^dumped" "criu dump --tcp-close of tallyd (its sockets stay with migtool, in repair)"
gx host2 "setsid $T dest c3 vc3 br0 $CG /mnt/lab/c3.rec -- /mnt/lab/c3.restore </dev/null >/tmp/c3.dest 2>&1 &"
for i in $(seq 200); do gx host2 "grep -q '^live=' /tmp/c3.dest" && break; sleep 0.2; done
dst=$(gx host2 "cat /tmp/c3.dest")
diag "dest: $dst"
is "$(kv "$dst" live)" 1 "host2 rebuilt c3, restored the sockets and started the restore script"
restored() {
	gx -t 90 host2 "for i in \$(seq 400); do grep -qs 'restored: pid' /tmp/c3.restore.err && exit 0
		grep -qs failed /tmp/c3.restore.err && break; sleep 0.2; done
		cat /tmp/c3.restore.err; grep -B4 -m3 Error $IMG/restore.log; exit 1"
}
# commit only once the process runs on host2 with its connection
if out=$(restored 2>&1); then
	pass "the script restored tallyd and handed its connection over"
	echo commit > "$SH/c3.decision"
else
	fail "the script restored tallyd and handed its connection over"
	diag "$out"
	echo rollback > "$SH/c3.decision"
fi
diag "$(gx host2 "cat /tmp/c3.restore.err")"
diag "decision: $(cat "$SH/c3.decision")"
for i in $(seq 100); do gx host1 "grep -q '^decision=' /tmp/c3.src" && break; sleep 0.2; done
src=$(gx host1 "cat /tmp/c3.src")
diag "source: $src"
is "$(kv "$src" decision)" commit "host1 committed and deleted c3"

# --- the verdict
sleep 3
gx client "touch /tmp/c3.stop"
r=$(gx -t 60 client "while kill -0 \$(cat /tmp/c3.cpid) 2>/dev/null; do sleep 0.3; done; cat /tmp/c3.client")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "the connection held and every count was right across the move"
is "$(kv "$r" resets)" 0 "no reset"
is "$(kv "$r" wrong)" 0 "no answer wrong"
diag "longest wait for an answer: $(kv "$r" longest_wait_ms) ms"
after=$(gx client "python3 $TC $ADDR 7000 1" | sed -n 's/.*first_total=\([0-9]*\).*/\1/p')
diag "the total a new connection sees on host2: $after"
if [ "${after:-0}" -gt "${before:-0}" ] 2>/dev/null; then
	pass "a new connection is served by CRIU's listener, and the total went on from memory ($before, then $after)"
else
	fail "the total did not go on ($before, then ${after:-nothing})"
fi
is "$(gx host2 "ip netns exec c3 ss -Htlnp sport = :7000 | grep -c python3")" 1 "tallyd listens on host2"
like "$(gx host2 "cat /tmp/c3.restore.err")" "not fit to run here: task [0-9]+ \\(python3\\): uids 0 0 0 0 not all 65534" \
	"the check of the restored tree, still stopped, finds it runs as root, not as the policy's user"
is "$(gx host1 "ls /run/netns | grep -cx c3")" 0 "nothing of c3 left on host1"
done_testing
