#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: the stall three kinds of peer see when svc moves host1 ->
# host2, with the drop lock and with the replaying lock (migrd.conf
# "lock"), and with the replaying lock and streamd gated ("run --gate":
# restarted before going live), for N connections of each kind.  Needs a lab that is up (make
# lab-up) and the debug build the lab tests use (BUILD=build/check).
# Prints a table; asserts nothing (the lab test 083 does).
#
#   tests/bench/stall.sh [N...]          (default 1 50 500)
#   MODES="drop replay" tests/bench/stall.sh 1   (the rows to run)
#
# The peers, each a streamc of N connections, every byte verified:
#   busy       RATE bytes/s each way per connection (default 2000)
#   send-only  writes to a port where svc writes nothing: its stall is
#              the longest wait for its bytes to be acknowledged
#   recv-only  reads what svc writes, writes nothing: its only packets
#              towards svc are acknowledgements
# "+ms" is the stall minus the migration's downtime (from the lock
# holding to the destination's release of the workload);
# the goal of the replaying lock is at most two round trips and 50 ms.
# LOCKQ=N sets the replaying lock's queue to N packets (and N * 2 KiB);
# migrd's default is 4096.  Rows of more than 10 connections per peer
# write every TICK_MID ms (default 20), and rows of more than 100 every
# TICK_LARGE ms (default 200) with LOCKQ_LARGE (default 65536): one TCG
# guest is saturated before any move by 150 connections writing every
# 5 ms (every packet costs it tens of microseconds), and by 1,500 at
# any tick tried; 1,500 peers that keep sending fill 4,096 packets in
# a fraction of the freeze.  Under each row, on stderr: how much of a
# host core each guest's QEMU used with the load before the move (the
# guests' real load under TCG), where host1's time went by its own
# account, the median of the flows' own longest stalls (is the longest
# one flow's or everyone's), the move's phases and what it carried.
# streamd and streamc write every TICK ms (default 5; theirs is 50), so
# that the stall is the move's and not up to two of their ticks.
# gate_ms/fork_ms (gated rows): how long streamd waited at its gate on
# host2, and how long after its fork it reached the gate.  rto/tlp: the
# retransmission timeouts and tail loss probes counted in svc on host2
# (TcpExt TCPTimeouts, TCPLossProbes) from its restore to just after
# the move.
# APART=1: one move per kind of peer, each with N connections alone (by
# default the three kinds share one move: 3 * N connections in svc).
# CAPTURE=1: tcpdump on the client from 1 s before the move to its end,
# kept in $B/bench/stall-MODE-N[-PEERS].pcap, and split by flowgaps.py (under
# the row): how long before the lock each flow was last written to,
# the window no flow got data in, and how long after the first each was
# served again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lab/lib-migrd.sh"
. "$(dirname "$0")/../lab/lib-migrate.sh"
trap mig_teardown EXIT
RATE=${RATE:-2000}
TICK=${TICK:-5}
TICK_MID=${TICK_MID:-20}
TICK_LARGE=${TICK_LARGE:-200}
LOCKQ_LARGE=${LOCKQ_LARGE:-65536}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 50 500)

# qemu_busy GUEST...: how much of one host core each guest's QEMU used
# over the same 3 s, in percent.  Under TCG this is the guest's real
# load: near 100 the guest is saturated, whatever its own accounting
# says (its clock runs on while the host preempts its vCPU thread).
qemu_busy() {
	local g pid hz out=""
	hz=$(getconf CLK_TCK)
	declare -A t0
	for g in "$@"; do
		pid=$(cat "${MIGR_LAB:-/run/migr-lab}/$g.pid" 2>/dev/null) || continue
		t0[$g]=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	done
	sleep 3
	for g in "$@"; do
		pid=$(cat "${MIGR_LAB:-/run/migr-lab}/$g.pid" 2>/dev/null) || continue
		out="$out${out:+, }$g $(( ($(awk '{ print $14 + $15 }' "/proc/$pid/stat") - ${t0[$g]}) * 100 / (3 * hz) ))%"
	done
	echo "$out"
}

ex() {		# MS DOWNTIME: "MS (+EXCESS)"
	[ -n "$1" ] && [ -n "$2" ] && printf '%s (%+d)\n' "$1" $(($1 - $2)) || echo "${1:--}"
}

cell() {	# MODE N: one move, one line of the table
	local mode=$1 n=$2 rtt r busy send recv d g to lock=${1%+gate}
	local TICK=$TICK LOCKQ=${LOCKQ:-} kinds=" ${PEERS:-busy send recv} " start conns=0
	local pcap=stall-$mode-$n${PEERS:+-$PEERS}.pcap
	[ "$n" -le 10 ] || TICK=$TICK_MID
	[ "$n" -le 100 ] || { TICK=$TICK_LARGE; LOCKQ=$LOCKQ_LARGE; }
	mig_setup "commit-timeout 3000" "lock $lock" ${LOCKQ:+"lock-queue-packets $LOCKQ"} \
		${LOCKQ:+"lock-queue-bytes $((LOCKQ * 2048))"} >/dev/null 2>&1 || { echo "$mode $n: setup failed"; return; }
	SVC_TICK=$TICK SVC_GATE=$([ "$mode" = "$lock" ] || echo 1) svc_start host1 "$RATE" >/dev/null ||
		{ echo "$mode $n: svc did not start"; return; }
	rtt=$(gx client "ping -c 5 -i 0.2 -q $SVC4" | sed -n 's|.* = [0-9.]*/\([0-9.]*\)/.*|\1|p')
	start="rm -f /tmp/$NS.b /tmp/$NS.s /tmp/$NS.r"
	[[ $kinds != *" busy "* ]] || { conns=$((conns + n)); start="$start
		setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' -n $n -r $RATE -t $TICK -d 0 -o /tmp/$NS.b </dev/null >/dev/null 2>&1 &"; }
	[[ $kinds != *" send "* ]] || { conns=$((conns + n)); start="$start
		setsid $W/streamc -c $SVC4:7401 -c '[$SVC6]:7401' -n $n -r $RATE -t $TICK -d 0 -a -o /tmp/$NS.s </dev/null >/dev/null 2>&1 &"; }
	[[ $kinds != *" recv "* ]] || { conns=$((conns + n)); start="$start
		setsid $W/streamc -c $SVC4:7400,recvonly -c '[$SVC6]:7400,recvonly' -n $n -t $TICK -d 0 -o /tmp/$NS.r </dev/null >/dev/null 2>&1 &"; }
	gx client "$start"
	# every connection up and accepted by streamd (none waiting in an
	# accept queue: a rollback could only reset those), within 120 s
	gx -t 130 host1 "for i in \$(seq 240); do
		e=\$(ip netns exec $NS ss -Htn state established '( sport = :7400 or sport = :7401 )' | wc -l)
		q=\$(ip netns exec $NS ss -Htln | awk '{ q += \$2 } END { print q + 0 }')
		[ \$e -ge $conns ] && [ \$q -eq 0 ] && exit 0; sleep 0.5; done; exit 1" ||
		echo "$mode $n: not every connection was up and accepted after 120 s" >&2
	# how busy the guests are with the load alone, over 3 s: a lab that
	# cannot carry the load before the move does not catch up after it,
	# whatever the move does.  First their QEMU on the host (the real
	# cost), then host1's own account over another 3 s: busy is 1 -
	# idle (/proc/uptime), user, system and softirq /proc/stat's tick
	# samples, svc, migrd and the busiest tasks their utime + stime,
	# all in percent of the time passed; a guest's clock runs on while
	# the host preempts it, so these say where, not how much.  Shell
	# builtins only between the two looks: a fork costs a TCG guest
	# tens of milliseconds, which would count as load.
	qemu=$(qemu_busy host1 host2 client)
	cpu=$(gx host1 "pids=\$(ip netns pids $NS); m=\$(pgrep -x migrd)
		look() { read -r l < /proc/uptime; echo \"up \$l\"
			read -r l < /proc/stat; echo \"\$l\"
			for p in \$pids; do read -r l < /proc/\$p/stat && echo \"svc \$l\"; done
			for p in \$m; do read -r l < /proc/\$p/stat && echo \"migrd \$l\"; done
			for f in /proc/[0-9]*/stat; do read -r l < \$f && echo \"any \$l\"; done
			echo end; }
		look 2>/dev/null; sleep 3; look 2>/dev/null" | awk '
		function ticks(line,   n, x, y) {	# utime + stime of a stat line
			n = split(line, x, ") "); split(x[n], y, " "); return y[12] + y[13] }
		BEGIN { k = 0 }
		$1 == "up" { c[k, "t"] = $2 * 100; c[k, "idle"] = $3 * 100 }
		$1 == "cpu" { c[k, "user"] = $2 + $3; c[k, "sys"] = $4; c[k, "soft"] = $7 + $8 }
		$1 == "svc" || $1 == "migrd" { c[k, $1] += ticks($0) }
		$1 == "any" { name = $3; gsub(/[()]/, "", name); a[k, $2 " " name] = ticks($0) }
		$1 == "end" { k++ }
		END { t = c[1, "t"] - c[0, "t"]; if (t <= 0) exit
			printf("%d%% (user %d, system %d, softirq %d; svc %d, migrd %d; busiest:",
			    100 - 100 * (c[1, "idle"] - c[0, "idle"]) / t,
			    100 * (c[1, "user"] - c[0, "user"]) / t, 100 * (c[1, "sys"] - c[0, "sys"]) / t,
			    100 * (c[1, "soft"] - c[0, "soft"]) / t, 100 * (c[1, "svc"] - c[0, "svc"]) / t,
			    100 * (c[1, "migrd"] - c[0, "migrd"]) / t)
			for (i = 0; i < 3; i++) {
				best = ""; bv = 0
				for (key in a) { split(key, kk, SUBSEP); if (kk[1] != 1) continue
					d = a[key] - a[0, kk[2]]; if (d > bv && !(kk[2] in used)) { bv = d; best = kk[2] } }
				if (best == "") break
				used[best] = 1; split(best, nm, " "); printf " %s %d", nm[2], 100 * bv / t }
			printf ")" }')
	[ -z "${CAPTURE:-}" ] || gx client "rm -f /tmp/$NS.pcap
		setsid tcpdump -i eth0 -s 96 -U -w /tmp/$NS.pcap tcp port 7400 </dev/null >/dev/null 2>&1 &
		sleep 1" >/dev/null 2>&1
	migrate host1 host2
	[ -z "${CAPTURE:-}" ] || { gx client "pkill -INT -x tcpdump; sleep 1; cp /tmp/$NS.pcap /mnt/lab/$pcap" &&
		mkdir -p "$B/bench" && mv "${MIGR_LAB:-/run/migr-lab}/share/$pcap" "$B/bench/"; } >/dev/null 2>&1
	# the destination namespace's own counters (new with it): how often
	# a restored socket's retransmission timer fired there, and how
	# often it probed a tail, since the restore
	to=$(gx host2 "ip netns exec $NS awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) { if (\$i == \"TCPTimeouts\") t = i; if (\$i == \"TCPLossProbes\") p = i }; h = 1 } else print \$t \"/\" \$p }' /proc/net/netstat")
	sleep 3
	r=$(gx -t 60 client "pkill -TERM -x streamc; for i in \$(seq 100); do pgrep -x streamc >/dev/null || break; sleep 0.2; done
		for f in b s r; do cat /tmp/$NS.\$f 2>/dev/null || echo; done")
	busy=$(sed -n 1p <<<"$r"); send=$(sed -n 2p <<<"$r"); recv=$(sed -n 3p <<<"$r")
	d=$(rep .ms.downtime); d=${d%.*}
	# a gated streamd's own account: how long it waited at its gate,
	# and how long after its fork it got there
	g=$(gx host2 "sed -n 's/.*gate opened after \([0-9]*\) ms (at the gate \([0-9]*\) ms after.*/\1\/\2/p' /var/log/migr/$NS.log 2>/dev/null | tail -1")
	printf '%-11s %5s %8s %7s %16s %16s %16s %-9s %-20s %-15s %s\n' "$mode" "$n" "${d:--}" "${rtt:--}" \
		"$(ex "$(kv "$busy" longest_stall_ms)" "$d")" \
		"$(ex "$(kv "$send" longest_ack_stall_ms)" "$d")" \
		"$(ex "$(kv "$recv" longest_stall_ms)" "$d")" \
		"$(kv "$busy" verdict)/$(kv "$send" mismatches)/$(kv "$recv" verdict)" \
		"$(rep .lock.kept)/$(rep .lock.sent)/$(rep .lock.forwarded)/$(rep .lock.overflow)" \
		"${g:--}" "${to:--}"
	# the split of the busy and recv-only flows' stalls, from the capture
	[ -z "${CAPTURE:-}" ] || [[ $kinds != *" busy "* && $kinds != *" recv "* ]] ||
		[ ! -s "$B/bench/$pcap" ] ||
		"$(dirname "$0")/flowgaps.py" "$B/bench/$pcap" 7400 "${d:-}" | sed "s/^/#   $mode $n capture: /" >&2
	# where the downtime went, and what it carried
	echo "#   $mode $n:${PEERS:+ peers$kinds(alone),} tick $TICK ms, lock queue ${LOCKQ:-4096}; before the move, QEMU of ${qemu:-?} of a host core, host1 says ${cpu:-?}; the flows' median stall: busy $(kv "$busy" median_stall_ms), recv-only $(kv "$recv" median_stall_ms) ms; ms $(jq -c .ms <<<"$MREP"); $(rep .sockets.total) sockets, $(rep .bytes.queued) bytes queued, $(rep .bytes.streamed) on the channel" >&2
}

printf '%-11s %5s %8s %7s %16s %16s %16s %-9s %-20s %-15s %s\n' lock conns down_ms rtt_ms \
	"busy ms" "send-only ms" "recv-only ms" verdicts "kept/sent/after/over" \
	"gate_ms/fork_ms" "rto/tlp"
for n in "${sizes[@]}"; do
	for mode in ${MODES:-drop replay replay+gate}; do
		if [ -z "${APART:-}" ]; then
			cell "$mode" "$n"
			continue
		fi
		for k in busy send recv; do
			PEERS=$k cell "$mode" "$n"
		done
	done
done
