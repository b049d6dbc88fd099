#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# systemd integration without systemd: migrd sends READY=1 (once it
# answers on its control socket) and STOPPING=1 to $NOTIFY_SOCKET, and
# takes its control socket from socket activation (LISTEN_FDS, fd 3),
# leaving that socket in place on exit.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

cleanup() {
	gx host1 '[ -s /run/migrd/notify.pid ] && kill $(cat /run/migrd/notify.pid)
		[ -s /run/migrd/act.pid ] && kill $(cat /run/migrd/act.pid)
		rm -f /run/migrd/notify.* /run/migrd/act.*' >/dev/null 2>&1
	migrd_cleanup host1
}
trap cleanup EXIT
cleanup
migrd_certs
migrd_conf host1 host2

check "a notify socket listener runs on host1" gx host1 '
	setsid socat -u UNIX-RECVFROM:/run/migrd/notify.sock,fork \
		OPEN:/run/migrd/notify.out,creat,append </dev/null >/dev/null 2>&1 &
	echo $! > /run/migrd/notify.pid
	for i in $(seq 50); do [ -S /run/migrd/notify.sock ] && exit 0; sleep 0.1; done; exit 1'
check "migrd starts with NOTIFY_SOCKET" gx host1 "NOTIFY_SOCKET=/run/migrd/notify.sock \
	setsid $MIGRD -d -f $GSHARE/host1.conf </dev/null >>/run/migrd/migrd.log 2>&1 &
	echo \$! > /run/migrd/test.pid
	for i in \$(seq 100); do $MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
sleep 0.5
like "$(gx host1 'cat /run/migrd/notify.out')" "READY=1" "READY=1 was sent"
migrd_stop host1
sleep 0.5
like "$(gx host1 'cat /run/migrd/notify.out')" "STOPPING=1" "STOPPING=1 was sent on exit"

# WatchdogSec=: WATCHDOG=1 at half of WATCHDOG_USEC, from the event loop
# (socat writes the datagrams one after the other, without newlines);
# not when WATCHDOG_PID names another process
gx host1 ': > /run/migrd/notify.out'
check "migrd starts with WATCHDOG_USEC=400000" gx host1 "NOTIFY_SOCKET=/run/migrd/notify.sock \
	WATCHDOG_USEC=400000 setsid $MIGRD -d -f $GSHARE/host1.conf </dev/null >>/run/migrd/migrd.log 2>&1 &
	echo \$! > /run/migrd/test.pid
	for i in \$(seq 100); do $MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
sleep 2
n=$(gx host1 'grep -o "WATCHDOG=1" /run/migrd/notify.out | wc -l')
if [ "${n:-0}" -ge 6 ]; then pass "WATCHDOG=1 sent every 200 ms ($n in about 2 s)"; else fail "WATCHDOG=1 sent $n times in about 2 s"; fi
migrd_stop host1
gx host1 ': > /run/migrd/notify.out'
check "migrd starts with another process's WATCHDOG_PID" gx host1 "NOTIFY_SOCKET=/run/migrd/notify.sock \
	WATCHDOG_USEC=400000 WATCHDOG_PID=1 setsid $MIGRD -d -f $GSHARE/host1.conf </dev/null >>/run/migrd/migrd.log 2>&1 &
	echo \$! > /run/migrd/test.pid
	for i in \$(seq 100); do $MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
sleep 1
is "$(gx host1 'grep -o "WATCHDOG=1" /run/migrd/notify.out | wc -l')" 0 "no WATCHDOG=1 for a watchdog that is not ours"
migrd_stop host1

# journald: a stderr that is $JOURNAL_STREAM gets "<prio>" and no name
check "migrd starts with stderr as its JOURNAL_STREAM" gx host1 ": > /run/migrd/journal.out
	exec 3>>/run/migrd/journal.out
	JOURNAL_STREAM=\$(stat -c %d:%i /run/migrd/journal.out) setsid $MIGRD -d -f $GSHARE/host1.conf </dev/null 2>&3 >&3 &
	echo \$! > /run/migrd/test.pid
	for i in \$(seq 100); do $MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
migrd_stop host1
j=$(gx host1 'cat /run/migrd/journal.out; rm -f /run/migrd/journal.out')
like "$j" "^<6>" "journal lines start with their priority"
is "$(grep -c '^migrd:' <<<"$j")" 0 "and do not repeat the program's name"

# Delegate=yes and cgroup-root auto: started as a systemd service (in its
# unit's cgroup, with INVOCATION_ID), migrd puts the workloads below it
U=/sys/fs/cgroup/fake.slice/migrd.service
check "migrd starts in a unit's cgroup with INVOCATION_ID" gx host1 "mkdir -p $U
	sh -c 'echo \$\$ > $U/cgroup.procs; INVOCATION_ID=0123 exec setsid $MIGRD -d -f $GSHARE/host1.conf' \
		</dev/null >>/run/migrd/migrd.log 2>&1 &
	echo \$! > /run/migrd/test.pid
	for i in \$(seq 100); do $MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
check "ns create and run" mc host1 "ns create deleg --addr 10.77.0.104/24 && $MIGCTL run deleg -- /bin/sleep 60"
is "$(gx host1 'for p in $(cat '$U'/ns/deleg/cgroup.procs); do cat /proc/$p/cgroup; done')" \
	"0::/fake.slice/migrd.service/ns/deleg" "the workload runs below the unit's cgroup"
is "$(gx host1 "cat /proc/\$(cat /run/migrd/test.pid)/cgroup")" "0::/fake.slice/migrd.service" \
	"migrd itself stays in the unit's cgroup"
check "ns delete" mc host1 ns delete deleg
check "its cgroup is gone" gx host1 "[ ! -e $U/ns/deleg ]"
migrd_stop host1
gx host1 "rmdir $U/ns $U /sys/fs/cgroup/fake.slice" >/dev/null 2>&1

# socket activation: systemd-socket-activate binds, migrd gets fd 3
migrd_conf host1 host2 -- "control-socket /run/migrd/act.sock"
check "systemd-socket-activate listens for migrd" gx host1 "
	setsid systemd-socket-activate -l /run/migrd/act.sock $MIGRD -d -f $GSHARE/host1.conf \
		</dev/null >>/run/migrd/migrd.log 2>&1 &
	echo \$! > /run/migrd/act.pid
	for i in \$(seq 50); do [ -S /run/migrd/act.sock ] && exit 0; sleep 0.1; done; exit 1"
out=$(gx -t 30 host1 "$MIGCTL -s /run/migrd/act.sock status")
like "$out" "^control-socket: /run/migrd/act.sock$" "the first connection starts migrd, which answers it"
like "$(migrd_log host1)" "control socket passed by systemd \\(fd 3\\)" "migrd used the passed socket"
pid=$(gx host1 "$MIGCTL -s /run/migrd/act.sock -j status | jq -r .data.pid")
like "$pid" "^[0-9]+$" "migrd reports its pid ($pid)"
is "$pid" "$(gx host1 'cat /run/migrd/act.pid')" "systemd-socket-activate exec'd migrd in place"
gx host1 'kill $(cat /run/migrd/act.pid); sleep 0.5' >/dev/null
check "the activated socket is left for systemd to remove" gx host1 '[ -S /run/migrd/act.sock ]'
done_testing
