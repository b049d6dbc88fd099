#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: a namespace with N established connections (default 10000)
# moves host1 -> host2 and back.  N idle connections (IPv4 and IPv6) and
# 8 busy ones, every byte of which is verified, from the client guest;
# migrd, streamd and streamc run with 65,536 open files.  Needs a lab
# that is up (make lab-up).  Prints a table of each move (sockets, bytes
# of records as JSON and on the channel, per socket, the phases) and the
# clients' verdicts, and writes them as JSON to $BUILD/bench/scale.json.
# Exits 1 if a move failed or a client saw a reset or a wrong byte;
# asserts no time.
#
# With SCALE_QUEUE=BYTES the N connections are not idle: each holds about
# BYTES queued each way when it moves.  Both ends write and neither
# reads (streamd's and streamc's pause=), with send and receive buffers
# of BYTES (the kernel doubles them, half of a receive buffer is the
# window): the service's receive queue, its send queue behind the
# client's closed window, and the client's own queues fill.  What the
# service's sockets hold is read with ss before the move.  After the
# moves SIGUSR2 ends the pause on both ends (streamd, streamc: flow.h's
# flow_drain()): the queues drain, every byte they held is checked, and
# the client's verdict counts those too.  The guests' tcp_mem is lifted
# for the run (10,000 connections hold about 160 MiB of buffers each
# side, more than a 1 GiB guest allows) and put back after.
#
#   tests/bench/scale.sh [N]
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lab/lib-migrd.sh"
. "$(dirname "$0")/../lab/lib-migrate.sh"
N=${1:-10000}
Q=${SCALE_QUEUE:-0}
FOREVER=4102444800	# 2100-01-01: a pause that only SIGUSR2 ends
tcpmem_restore() {
	local g
	for g in host1 host2 client; do
		gx "$g" "[ -s /tmp/tcp_mem.saved ] && cat /tmp/tcp_mem.saved > /proc/sys/net/ipv4/tcp_mem; rm -f /tmp/tcp_mem.saved" >/dev/null 2>&1
	done
}
trap 'mig_teardown; [ "$Q" = 0 ] || tcpmem_restore' EXIT
if [ "$Q" != 0 ]; then
	for g in host1 host2 client; do
		gx "$g" "[ -s /tmp/tcp_mem.saved ] || cat /proc/sys/net/ipv4/tcp_mem > /tmp/tcp_mem.saved
			echo '131072 262144 393216' > /proc/sys/net/ipv4/tcp_mem" ||
			{ echo "scale: cannot lift tcp_mem on $g" >&2; exit 1; }
	done
	SVC_EXTRA="-l [::]:7404,rate=16384,pause=0:$FOREVER,buf=$Q"
	target="-c $SVC4:7404,pause=0:$FOREVER,buf=$Q -c '[$SVC6]:7404,pause=0:$FOREVER,buf=$Q' -r 16384"
else
	target="-c $SVC4:7401,idle -c '[$SVC6]:7401,idle'"
fi
export LAB_NOFILE=65536
MIG_TIMEOUT=${MIG_TIMEOUT:-900}
out=$top/$BUILD/bench
mkdir -p "$out"

# a previous run's connections, closed at its teardown, may still be
# dying as orphans (past 4,096 a lab guest logs "TCP: too many orphaned
# sockets" and resets instead of closing): wait until they are gone
for g in host1 host2 client; do
	for i in $(seq 180); do
		o=$(gx "$g" "awk '/^TCP:/ { print \$5 }' /proc/net/sockstat")
		[ "${o:-0}" = 0 ] && break
		[ "$i" = 1 ] && echo "# $g: $o orphaned connections of a previous run, waiting"
		sleep 1
	done
done
mig_setup "commit-timeout 10000" "migrate-timeout 600" >/dev/null ||
	{ echo "scale: migrd setup failed" >&2; exit 1; }
svc_start host1 2000 >/dev/null || { echo "scale: svc did not start" >&2; exit 1; }
t0=$(date +%s)
gx client "ulimit -n 65536; rm -f /tmp/$NS.idle /tmp/$NS.busy
	setsid $W/streamc $target -n $N -d 0 -o /tmp/$NS.idle </dev/null >/tmp/$NS.idle.log 2>&1 &
	setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' -n 8 -r 2000 -d 0 -o /tmp/$NS.busy </dev/null >/tmp/$NS.busy.log 2>&1 &"
# every connection established in svc (listeners aside)
est=0
for i in $(seq 600); do
	est=$(gx host1 "ip netns exec $NS ss -Htn state established | wc -l")
	[ "${est:-0}" -ge $((N + 8)) ] && break
	sleep 1
done
echo "# $est connections established in $(( $(date +%s) - t0 )) s"
[ "${est:-0}" -ge $((N + 8)) ] || { echo "scale: only $est of $((N + 8)) connections came up" >&2; exit 1; }
sleep 5
# queued (Recv-Q, Send-Q) in the service's N connections: bytes in all
queued() {
	gx "$1" "ip netns exec $NS ss -Htn state established '( sport = :7404 )'" |
		awk '{ r += $1; s += $2 } END { printf "%d %d", r, s }'
}
q_rx=0 q_tx=0
if [ "$Q" != 0 ]; then
	# full once two looks a second apart agree
	prev=
	for i in $(seq 120); do
		cur=$(queued host1)
		[ "$cur" = "$prev" ] && break
		prev=$cur
		sleep 1
	done
	read -r q_rx q_tx <<<"$cur"
	echo "# queued in the service's $N connections before the move: $q_rx bytes received (unread), $q_tx to send; per connection $((q_rx / N)) and $((q_tx / N))"
fi

moves=() rc=0
move() {	# FROM TO
	local n st en q per
	migrate "$1" "$2"
	echo "$MOUT" | sed 's/^/# /'
	n=$(rep .sockets.total) st=$(rep .bytes.streamed) en=$(rep .bytes.encoded) q=$(rep .bytes.queued)
	per=$(( (${st:-0} - ${q:-0}) / ${n:-1} ))
	printf '| %s → %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" \
		"${MRC:--}" "${n:--}" "${en:--}" "${st:--}" "$per" \
		"$(rep .ms.freeze)" "$(rep .ms.dump)" "$(rep .ms.transfer)" "$(rep .ms.restore)" \
		"$(rep .ms.commit)" "$(rep .ms.downtime)" "$(rep .ms.total)"
	moves+=("$(jq -c --arg from "$1" --arg to "$2" --argjson rc "${MRC:-1}" \
		'{from: $from, to: $to, rc: $rc, sockets, bytes, ms}' <<<"$MREP")")
	[ "$MRC" = 0 ] || rc=1
}
echo "| move | exit | sockets | JSON bytes | on the channel | per socket | freeze | dump | transfer | restore | commit | downtime ms | total ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
move host1 host2
sleep 10
move host2 host1
sleep 10
if [ "$Q" != 0 ]; then
	# the pauses end: what the queues held is read and checked
	gx host1 "pkill -USR2 -x streamd"
	gx client "pkill -USR2 -x streamc"
	for i in $(seq 300); do
		[ "$(queued host1)" = "0 0" ] && break
		sleep 1
	done
	echo "# queues drained in about $i s: $(queued host1) left"
	sleep 2
fi
r=$(gx -t 120 client "pkill -TERM -x streamc; for i in \$(seq 300); do pgrep -x streamc >/dev/null || break; sleep 0.2; done
	cat /tmp/$NS.idle; cat /tmp/$NS.busy")
idle=$(sed -n 1p <<<"$r") busy=$(sed -n 2p <<<"$r")
echo "# idle: $idle"
echo "# busy: $busy"
for c in "$idle" "$busy"; do
	[ "$(kv "$c" resets)" = 0 ] && [ "$(kv "$c" mismatches)" = 0 ] || rc=1
done
[ "$(kv "$busy" verdict)" = PASS ] || rc=1
# queued connections wrote and read: their verdict counts
[ "$Q" = 0 ] || [ "$(kv "$idle" verdict)" = PASS ] || rc=1
printf '%s\n' "${moves[@]}" | jq -s --argjson n "$N" --arg idle "$idle" --arg busy "$busy" \
	--argjson q "$Q" --argjson q_rx "$q_rx" --argjson q_tx "$q_tx" \
	'{connections: $n, queue: $q, queued_before: {rx: $q_rx, tx: $q_tx}, moves: ., idle: $idle, busy: $busy}' > "$out/scale.json"
echo "# $out/scale.json"
exit $rc
