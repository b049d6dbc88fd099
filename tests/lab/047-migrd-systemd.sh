#!/usr/bin/env bash
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
