#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# What a workload may do on host1 (issue 12: a program a peer brings
# must not get root here).  As workload-user nobody, the default: its
# uid and gid, no capability in any set, no_new_privs, and in its mount
# namespace migrd's key, control socket, state folder and configuration
# are out of sight (the key reads as empty, the socket refuses, the
# folder is empty); a set-user-ID program gives it nothing.  With
# workload-capabilities cap_net_admin it keeps exactly that one, ambient.
# As root (allowed, warned about) the key and the socket are still
# hidden.  Its output goes to workload-log-dir (hidden from it too), not
# the state folder, through a keeper with no capability, not its child,
# that moves the log to NAME.log.1 at workload-log-max.  With
# workload-pids-max and workload-memory-max, a program that forks too
# much is refused its forks and one that writes too much memory is
# killed, and a cgroup-root the controllers cannot reach is refused by
# name.  Bad values stop "migrd -n" with the reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1; gx host1 "rm -f /tmp/suid-id"' EXIT
migrd_cleanup host1
migrd_certs
KEY=$GSHARE/certs/host1-key.pem
# what the workload reports about itself, into its log
D=/usr/local/libexec/migr-test
PROBE=$D/probe
cat > "$MSHARE/probe" <<EOS
#!/bin/sh
echo uid=\$(id -u) gid=\$(id -g) groups=\$(id -G | tr ' ' ,)
grep -E '^(CapPrm|CapEff|CapInh|CapAmb|NoNewPrivs):' /proc/self/status | tr -d '\t'
echo key=\$(cat $KEY 2>/dev/null | wc -c)
echo statedir=\$(ls -A /var/lib/migrd 2>/dev/null | wc -l)
echo logdir=\$(ls -A /var/log/migr 2>/dev/null | wc -l)
echo conf=\$(cat $GSHARE/host1.conf 2>/dev/null | wc -c)
$MIGCTL status >/dev/null 2>&1; echo ctl=\$?
echo suid=\$(/tmp/suid-id -u)
echo done
exec sleep 600
EOS
gx host1 "mkdir -p $D && cp $GSHARE/probe $PROBE && chmod 755 $PROBE"
# a set-user-ID root copy of id(1): no_new_privs must make it useless
gx host1 "cp /usr/bin/id /tmp/suid-id && chmod 4755 /tmp/suid-id"

# probe_as LABEL CONF-LINE...: migrd with those lines, the probe in ns w1,
# its report in $R
probe_as() {
	local label=$1; shift
	migrd_stop host1 >/dev/null
	migrd_conf host1 host2 -- "$@"
	check "$label: migrd starts" migrd_start host1
	mc host1 "ns delete w1" >/dev/null 2>&1
	gx host1 "rm -f /var/log/migr/w1.log*"
	check "$label: ns w1" mc host1 "ns create w1 --addr 10.77.0.160/24"
	check "$label: the probe runs" mc host1 "run w1 -- $PROBE"
	R=
	for i in $(seq 50); do
		R=$(gx host1 "cat /var/log/migr/w1.log 2>/dev/null")
		grep -q '^done' <<<"$R" && break; sleep 0.2
	done
	diag "$R"
}

probe_as "nobody" "workload-user nobody"
is "$(kv "$R" uid) $(kv "$R" gid) $(kv "$R" groups)" "65534 65534 65534" "uid, gid and groups are nobody's, no supplementary group"
for s in CapPrm CapEff CapInh CapAmb; do
	is "$(sed -n "s/^$s://p" <<<"$R")" 0000000000000000 "$s is empty"
done
is "$(sed -n 's/^NoNewPrivs://p' <<<"$R")" 1 "no_new_privs is set"
is "$(kv "$R" suid)" 65534 "a set-user-ID root program still runs as nobody"
is "$(kv "$R" key)" 0 "migrd's key reads as empty in its mount namespace"
is "$(kv "$R" statedir)" 0 "migrd's state folder looks empty"
is "$(kv "$R" logdir)" 0 "so does the folder of the workloads' logs"
check "(its log is there for migrd)" gx host1 "grep -q '^done' /var/log/migr/w1.log"
is "$(kv "$R" conf)" 0 "migrd's configuration reads as empty"
check "the control socket does not answer it" test "$(kv "$R" ctl)" != 0
like "$(gx host1 "head -c 40 $KEY")" "PRIVATE KEY" "(the key is there for migrd itself)"

# a program in a folder closed to nobody: found before exec, named
gx host1 "mkdir -p $D/closed && chmod 700 $D/closed && cp $PROBE $D/closed/probe"
out=$(mc host1 "run w1 -- $D/closed/probe 2>&1; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 12 "a program nobody cannot reach: run exits 12"
like "$out" "check the program: Permission denied" "saying the check failed, and why"

probe_as "cap_net_admin" "workload-user nobody" "workload-capabilities cap_net_admin"
is "$(kv "$R" uid)" 65534 "still nobody"
for s in CapPrm CapEff CapInh CapAmb; do
	is "$(sed -n "s/^$s://p" <<<"$R")" 0000000000001000 "$s is cap_net_admin alone"
done
is "$(kv "$R" key)" 0 "the key is still hidden"

probe_as "root" "workload-user root"
is "$(kv "$R" uid)" 0 "workload-user root: uid 0"
like "$(migrd_log host1)" "workloads run as root" "migrd warns about it"
is "$(kv "$R" key) $(kv "$R" statedir) $(kv "$R" logdir)" "0 0 0" "the key, the state and the logs are hidden from root too"
check "and the control socket" test "$(kv "$R" ctl)" != 0
mc host1 "ns delete w1" >/dev/null 2>&1

# The log: 400 lines of 110 bytes against workload-log-max 4096.  The
# keeper writes what one read brings (16 KiB at most) before it looks
# at the size again.
cat > "$MSHARE/chatty" <<'EOS'
#!/bin/sh
i=0
while [ $i -lt 400 ]; do
	echo "line $i $(printf '%0100d' 0)"; i=$((i + 1))
done
echo done
exec sleep 600
EOS
gx host1 "cp $GSHARE/chatty $D/chatty && chmod 755 $D/chatty"
migrd_stop host1 >/dev/null
migrd_conf host1 host2 -- "workload-log-max 4096"
check "log: migrd starts with workload-log-max 4096" migrd_start host1
mc host1 "ns delete w1" >/dev/null 2>&1
gx host1 "rm -f /var/log/migr/w1.log*"
check "log: ns w1" mc host1 "ns create w1 --addr 10.77.0.160/24"
check "log: the chatty program runs" mc host1 "run w1 -- $D/chatty"
check "log: its last line reaches w1.log" gx host1 \
	"for i in \$(seq 100); do tail -1 /var/log/migr/w1.log 2>/dev/null | grep -q '^done' && exit 0; sleep 0.1; done; exit 1"
check "log: the one before is w1.log.1" gx host1 "test -s /var/log/migr/w1.log.1"
sizes=$(gx host1 "stat -c %s /var/log/migr/w1.log /var/log/migr/w1.log.1")
diag "sizes: $(echo $sizes)"
for n in $sizes; do
	check "log: $n bytes, at most 4096 + 16384" test "$n" -le 20480
done
check "log: nothing in the state folder" gx host1 "! ls /var/lib/migrd/w1.log* 2>/dev/null"
kp=$(gx host1 "pgrep -x migr-log | head -1")
wp=$(gx host1 "pgrep -f '^sleep 600' | head -1")
check "log: a keeper runs (pid $kp)" test -n "$kp"
is "$(gx host1 "grep -E '^(CapEff|CapPrm|NoNewPrivs):' /proc/$kp/status | tr -d '\t' | tr '\n' ' '")" \
	"CapPrm:0000000000000000 CapEff:0000000000000000 NoNewPrivs:1 " \
	"log: the keeper holds no capability, no_new_privs"
check "log: it is not the workload's child" test "$(gx host1 "awk '/^PPid:/ {print \$2}' /proc/$kp/status")" != "$wp"
is "$(gx host1 "ls /proc/$kp/fd | wc -l")" 3 "log: it holds three descriptors (the pipe, the log, its folder)"
is "$(gx host1 "cat /proc/$kp/cgroup")" "0::/migr/w1/log" "log: in a cgroup of its own below the namespace's"
is "$(gx host1 "cat /sys/fs/cgroup/migr/w1/cgroup.procs")" "$wp" "log: the namespace's tasks are the workload alone"
is "$(gx host1 "readlink /proc/$kp/ns/net")" "$(gx host1 "readlink /proc/1/ns/net")" \
	"log: in the host's network namespace, not the namespace's"
is "$(gx host1 "ip netns pids w1")" "$wp" "log: so the namespace's processes are the workload alone"
check "log: a SIGUSR1 sent to everything does not stop it" gx host1 "kill -USR1 $kp; sleep 0.3; kill -0 $kp"
mc host1 "ns delete w1" >/dev/null 2>&1
check "log: the keeper ends with its namespace" gx host1 \
	"for i in \$(seq 50); do kill -0 $kp 2>/dev/null || exit 0; sleep 0.1; done; exit 1"

# --- limits: workload-memory-max and workload-pids-max bound what a
# namespace's programs may take together (cgroup memory.max, pids.max)
CG1=/sys/fs/cgroup/migr/w1
cat > "$MSHARE/forker" <<'EOS'
#!/bin/sh
i=0
while [ $i -lt 40 ]; do sleep 600 2>/dev/null & i=$((i + 1)); done
echo forked
exec sleep 600
EOS
gx host1 "cp $GSHARE/forker $D/forker && chmod 755 $D/forker"
migrd_stop host1 >/dev/null
migrd_conf host1 host2 -- "workload-memory-max 48" "workload-pids-max 12"
check "limits: migrd starts with workload-memory-max 48, workload-pids-max 12" migrd_start host1
mc host1 "ns delete w1" >/dev/null 2>&1
gx host1 "rm -f /var/log/migr/w1.log*"
check "limits: ns w1" mc host1 "ns create w1 --addr 10.77.0.160/24"
is "$(gx host1 "cat $CG1/memory.max $CG1/pids.max" | tr '\n' ' ')" "50331648 12 " \
	"limits: w1's cgroup has memory.max 48 MiB and pids.max 12"
check "limits: a program that forks 40 sleepers runs" mc host1 "run w1 -- $D/forker"
# (dash gives up at the first fork refused: "forked" never comes)
check "limits: the forks beyond 12 are refused by the kernel (pids.events)" gx host1 \
	"for i in \$(seq 100); do grep -q '^max [1-9]' $CG1/pids.events && exit 0; sleep 0.1; done; exit 1"
sleep 1
n=$(gx host1 "cat $CG1/pids.current")
diag "pids.current $n; pids.events: $(gx host1 "cat $CG1/pids.events")"
if [ "$n" -le 12 ] && [ "$n" -ge 2 ] 2>/dev/null; then pass "limits: at most 12 tasks in w1 ($n)"; else fail "limits: $n tasks in w1"; fi
mc host1 "ns delete w1" >/dev/null 2>&1
check "limits: ns w1 again" mc host1 "ns create w1 --addr 10.77.0.160/24"
check "limits: a program that writes 200 MiB runs" mc host1 \
	"run w1 -- /usr/bin/python3 -c 'b = b\"x\" * (200 << 20); import time; time.sleep(600)'"
check "limits: it is killed by the cgroup's OOM killer" gx host1 \
	"for i in \$(seq 150); do grep -q '^oom_kill [1-9]' $CG1/memory.events && exit 0; sleep 0.2; done; exit 1"
diag "memory.events: $(gx host1 "cat $CG1/memory.events | tr '\n' ' '")"
is "$(gx host1 "pgrep -f '[b] = b' | wc -l")" 0 "limits: it is gone; the host is not short of memory"
mc host1 "ns delete w1" >/dev/null 2>&1
# (the tests after this one run without them)
gx host1 "echo '-memory -pids' > /sys/fs/cgroup/migr/cgroup.subtree_control" 2>/dev/null || true
# a cgroup-root below a cgroup that holds a process: the controller
# cannot reach it (under systemd, the unit's own cgroup); refused by name
migrd_stop host1 >/dev/null
gx host1 "mkdir -p /sys/fs/cgroup/busy && (setsid sleep 600 </dev/null >/dev/null 2>&1 & echo \$! > /sys/fs/cgroup/busy/cgroup.procs)"
migrd_conf host1 host2 -- "workload-memory-max 48" "cgroup-root /sys/fs/cgroup/busy/ns"
check "limits: migrd starts with cgroup-root below a busy cgroup" migrd_start host1
out=$(mc host1 "ns create w1 --addr 10.77.0.160/24 2>&1; echo rc=\$?")
diag "$out"
like "$out" "cannot enable the memory controller in /sys/fs/cgroup/busy: it holds processes of its own" \
	"limits: ns create says why the limit cannot be had"
like "$out" "rc=12$" "... and fails (12)"
is "$(gx host1 "ip netns list | grep -c '^w1'")" 0 "limits: ... with no namespace left"
mc host1 "ns delete w1" >/dev/null 2>&1
migrd_stop host1 >/dev/null
gx host1 "pkill -f '^sleep 600' ; for i in \$(seq 50); do rmdir /sys/fs/cgroup/busy/ns /sys/fs/cgroup/busy 2>/dev/null; [ -d /sys/fs/cgroup/busy ] || exit 0; sleep 0.1; done"

# values migrd refuses, before it starts
for bad in "workload-user nosuchuser:no such user" \
	"workload-capabilities cap_sys_admin:is not one of" \
	"workload-group nosuchgroup:no such group"; do
	migrd_conf host1 host2 -- "${bad%%:*}"
	out=$(gx host1 "$MIGRD -n -f $GSHARE/host1.conf 2>&1; echo rc=\$?")
	is "$(sed -n 's/^rc=//p' <<<"$out")" 1 "migrd -n with '${bad%%:*}' exits 1"
	like "$out" "${bad#*:}" "saying why"
done
done_testing
