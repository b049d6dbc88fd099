#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Connections waiting in a listener's accept queue move in light mode:
# the source accepts them at its freeze and carries them as established
# connections, paused with their listener and saved one per step of its
# loop (a listener with hundreds of them once held the loop for seconds
# in one step, and the peer channel died).  streamd is stopped (SIGSTOP,
# in its epoll wait: a light-mode move takes a stopped task there) on
# host1 while a client opens 300 connections, so every one of them
# waits in the queue; then svc moves to host2, where streamd starts
# afresh with them among its sockets.  Checked: the report counts 300
# connections taken from accept queues, the source's log shows no loop
# hold over a second (in one step, hundreds take seconds under ASan in
# TCG: the stall bench with 1,500 connections held it 3.4 to 6.6 s), and
# the client reads every byte on all 300 with no reset.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT
N=300

check "migrd on host1 and host2, peered" mig_setup "commit-timeout 2000"
check "svc serving on host1" svc_start host1 20000
pid=$(gx host1 "ip netns pids $NS | head -1")
like "$pid" '^[0-9]+$' "streamd runs in svc (pid $pid)"
# stopped in its wait for input (epoll_wait, 232, or epoll_pwait, 281 on
# x86_64), where a light-mode move takes a stopped task: one stopped in
# the middle of its tick would be refused (taskrest.h).  Idle, it nearly
# always is; if not, it is let go on and stopped again.
check "streamd stopped in its epoll wait: it accepts nothing" gx host1 \
	"for i in \$(seq 20); do kill -STOP $pid; for j in \$(seq 50); do grep -q '^State:.*T' /proc/$pid/status && break; sleep 0.02; done; \
		case \$(cut -d' ' -f1 /proc/$pid/syscall) in 232|281) exit 0 ;; esac; kill -CONT $pid; sleep 0.05; done; exit 1"
gx client "rm -f /tmp/$NS.report; setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' \
	-n $N -r 2000 -d 0 -o /tmp/$NS.report </dev/null >/tmp/$NS.client 2>&1 &"
q=$(gx host1 "for i in \$(seq 100); do q=\$(ip netns exec $NS ss -Htln sport = :7400 | awk '{ print \$2 }'); [ \"\$q\" = $N ] && break; sleep 0.2; done; echo \$q")
is "$q" "$N" "$N connections wait in the accept queue of port 7400"

migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migctl migrate exits 0"
is "$(rep .sockets.accepted)" "$N" "the report: $N connections taken from accept queues"
is "$(svc_where)" host2 "svc runs on host2 only"
holds=$(migrd_log host1 | grep -c "event loop held for [0-9]* ms" || true)
is "${holds:-0}" 0 "host1's loop was never held long during the move"
[ "${holds:-0}" = 0 ] || diag "$(migrd_log host1 | grep "event loop held")"
n=$(gx host2 "ip netns exec $NS ss -Htn state established sport = :7400 | grep -c ." 2>/dev/null)
is "$n" "$N" "host2: the $N connections are established in svc"

sleep 3
gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done"
r=$(gx client "cat /tmp/$NS.report")
check_client "$r" "on connections that waited in the accept queue"
is "$(kv "$r" flows)" "$N" "client: all $N connections open to the end"
rx=$(kv "$r" rx_bytes)
if [ "${rx:-0}" -gt 0 ]; then pass "client: streamd on host2 wrote to them ($rx bytes read)"
else fail "client: nothing read on the moved connections"; fi
done_testing
