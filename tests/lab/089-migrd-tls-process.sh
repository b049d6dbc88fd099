#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The peer channel's TLS lives in a process of its own (migrd/tlsd.h):
# migrd's child "migrd-tls" holds every peer connection and runs as
# channel-user (65533 by default) with no capability, no_new_privs, not
# dumpable, no fork, chrooted to the empty state-dir/empty, under a
# seccomp filter (no socket, open, exec or fork: it tries); migrd itself
# holds no socket of the peer port but its listener.  A workload's user
# cannot signal it.  Killed, it is restarted, the session comes back,
# and a namespace then moves with every byte verified.  channel-user may
# not be root or workload-user.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT

check "migrd on host1 and host2, peered" mig_setup
# MIGRD_TLS_PROBE: the TLS process tries, once set up, what it must not
check "host1's migrd again, its TLS process probing its sandbox" \
	eval 'migrd_stop host1 && migrd_start host1 MIGRD_TLS_PROBE=1 && migrd_peered host1 host2'
parent=$(gx host1 "cat /run/migrd/test.pid")
pid=$(gx host1 "pgrep -x -P $parent migrd-tls")
like "$pid" '^[0-9]+$' "host1: migrd has one child named migrd-tls (pid $pid)"
is "$(mc host1 -j status | jq -r .data.tls_process.pid)" "$pid" "migctl status names it"
out=$(mc host1 status)
like "$out" "tls-process: pid $pid, uid 65533" "and says so in text"
like "$out" "event-loop: held [0-9]+ ms at most, [0-9]+ time\\(s\\) over 1 s" "with how long the event loop was held (loopwatch.c)"

st=$(gx host1 "cat /proc/$pid/status")
field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' <<<"$st"; }
is "$(field Uid | tr -s '\t ' ' ')" "65533 65533 65533 65533" "its uid: 65533, real, effective, saved and fs"
is "$(field Gid | tr -s '\t ' ' ')" "65533 65533 65533 65533" "its gid: 65533"
is "$(field Groups | tr -d ' \t')" "65533" "no other group"
for c in CapInh CapPrm CapEff CapAmb; do
	is "$(field $c)" 0000000000000000 "$c: no capability"
done
is "$(field NoNewPrivs)" 1 "no_new_privs"
is "$(gx host1 "readlink /proc/$pid/root")" /var/lib/migrd/empty "chrooted to state-dir/empty"
is "$(gx host1 "ls -A /var/lib/migrd/empty | wc -l")" 0 "which is empty (no key, no state)"
is "$(gx host1 "stat -c %u /proc/$pid/environ")" 0 "not dumpable: its /proc files are root's"
is "$(field Seccomp)" 2 "a seccomp filter"
log=$(migrd_log host1)
for what in "socket(AF_INET)" "socket(AF_UNIX)" 'open(".")' execve fork; do
	like "$log" "migrd-tls: tls: probe: ${what//[()]/.}: Operation not permitted" "it may not $what"
done
like "$(gx host1 "grep 'Max processes' /proc/$pid/limits")" "Max processes +0 +0 " "it cannot fork"
like "$(gx host1 "setpriv --reuid=65534 --regid=65534 --clear-groups kill -STOP $pid 2>&1; echo rc=\$?" | tr '\n' ' ')" \
	"Operation not permitted rc=1" "nobody (the default workload-user) cannot signal it"

# the peer connection is the TLS process's, not migrd's
conns=$(gx host1 "ss -Htnp state established '( sport = :7780 or dport = :7780 )'")
diag "host1's peer connections: $conns"
like "$conns" "\"migrd-tls\",pid=$pid," "the session with host2 is held by migrd-tls"
unlike "$conns" "pid=$parent," "and by no descriptor of migrd's"

# killed, it comes back, and so does the session
sessions=$(mc host1 -j peers | jq -r '.data.peers[0].sessions')
gx host1 "kill -KILL $pid"
up=0
for i in $(seq 60); do
	j=$(mc host1 -j peers)
	if [ "$(jq -r '.data.peers[0].state' <<<"$j")" = up ] &&
	   [ "$(jq -r '.data.peers[0].sessions' <<<"$j")" -gt "$sessions" ]; then up=1; break; fi
	sleep 0.5
done
is "$up" 1 "after SIGKILL: a new TLS process, and the session with host2 up again"
is "$(gx host1 "kill -0 $parent && echo alive")" alive "migrd itself lives on"
pid2=$(gx host1 "pgrep -x -P $parent migrd-tls")
like "$pid2" '^[0-9]+$' "one migrd-tls again"
unlike "$pid2" "^$pid\$" "a new one (pid $pid2)"
like "$(migrd_log host1)" "TLS process \\(pid $pid\\) killed by signal 9" "migrd logs how it ended"
like "$(migrd_log host1)" "TLS process: (it exited|its channel closed); restarting it in [0-9]+ s" "and that it restarts it"

# and the channel through the new one carries a migration, byte-exact
check "svc created and serving on host1 through migrd" svc_start host1 20000
capture_start
client_start 4 40
sleep 4
migrate host1 host2
is "$MRC" 0 "svc moves host1 -> host2 over the new TLS process"
diag "$MOUT"
check_client "$(client_report)" "across the move"
is "$(capture_stop | wc -l)" 0 "no FIN or RST from the busy port"
for g in host1 host2; do diag "$g: $(mc $g status | grep event-loop)"; done

# channel-user: not root, not workload-user's uid
migrd_conf host1 host2 -- "channel-user root"
like "$(gx host1 "$MIGRD -n -f $GSHARE/host1.conf 2>&1; echo rc=\$?" | tr '\n' ' ')" \
	"channel-user root: may not be root.*rc=1" "channel-user root: refused"
migrd_conf host1 host2 -- "workload-user nobody" "channel-user nobody"
like "$(gx host1 "$MIGRD -n -f $GSHARE/host1.conf 2>&1; echo rc=\$?" | tr '\n' ' ')" \
	"channel-user nobody: is workload-user's uid 65534.*rc=1" "channel-user = workload-user: refused"
migrd_conf host1 host2 -- "workload-user nobody" "channel-user 65534"
like "$(gx host1 "$MIGRD -n -f $GSHARE/host1.conf 2>&1; echo rc=\$?" | tr '\n' ' ')" \
	"channel-user 65534: is workload-user's uid 65534.*rc=1" "its uid, given as a number: refused"
done_testing
