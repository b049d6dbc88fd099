#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark (issue 15): what a moved connection remembers of its path.
# A bulk transfer from svc (streamd) to the client crosses a path with
# added delay (netem on the client's link), and svc moves host1 -> host2
# in the middle of it, once with "repair-path yes" on both hosts and once
# with "no", for each round trip time.  Needs a lab that is up and the
# build the lab tests use; asserts nothing (lab 088 does).
#
#   tests/bench/after-move.sh [RTT_MS...]        (default 20 100)
#   REPEAT=N (default 2): runs of each, "yes" and "no" taking turns
#
# Columns, from the receiver's own timeline (20 ms samples, tests/
# workload/bulkrecv.py): the gap in the stream (freeze to first byte
# after it), throughput in the second and the five seconds before the
# gap, in the first and the first five seconds after it, and their
# ratios; the RTO of an idle connection of svc right after the move (what
# a segment lost around the move would wait: about RTT + 200 ms when the
# path came along, 3 s when it did not), and the migration's downtime.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lab/lib-migrd.sh"
. "$(dirname "$0")/../lab/lib-migrate.sh"
IF=
cleanup() {
	[ -n "$IF" ] && gx client "tc qdisc del dev $IF root" >/dev/null 2>&1
	mig_teardown
}
trap cleanup EXIT
RATE=${RATE:-200000000}
WARM=${WARM:-8}
REPEAT=${REPEAT:-2}	# runs of each cell, yes and no alternating
SECS=$((WARM + 20))
rtts=("$@")
[ ${#rtts[@]} -gt 0 ] || rtts=(20 100)
IF=$(gx client "ip -o -4 route get 10.77.0.1" | sed -n 's/.* dev \([^ ]*\).*/\1/p')

# rates TIMELINE: "gap_ms before1 before5 after1 after5" in MB/s, from the
# longest run of samples in which no byte came
rates() {
	awk '{ t[NR] = $1; b[NR] = $2 }
	END {
		best = 0; s = 0
		for (i = 2; i <= NR; i++) {
			if (b[i] == b[i-1]) { if (!s) s = i - 1; len = t[i] - t[s]
				if (len > best) { best = len; fs = s; fe = i } }
			else s = 0
		}
		if (!best) { print "- - - - -"; exit }
		f = t[fs]; th = t[fe]
		for (i = 1; i <= NR; i++) {
			if (t[i] <= f - 1 && (!a1 || t[i] > t[a1])) a1 = i
			if (t[i] <= f - 5 && (!a5 || t[i] > t[a5])) a5 = i
			if (t[i] <= th + 1) z1 = i
			if (t[i] <= th + 5) z5 = i
		}
		mb = 1048576
		printf "%d %.2f %.2f %.2f %.2f\n", best * 1000,
		    (b[fs] - b[a1]) / (f - t[a1]) / mb, (b[fs] - b[a5]) / (f - t[a5]) / mb,
		    (b[z1] - b[fe]) / (t[z1] - th) / mb, (b[z5] - b[fe]) / (t[z5] - th) / mb
	}' <<<"$1"
}

cell() {	# RTT PATH
	local rtt=$1 path=$2 r g b1 b5 a1 a5 rto d
	mig_setup "commit-timeout 3000" "repair-path $path" >/dev/null 2>&1 || { echo "$rtt $path: setup failed"; return; }
	svc_start host1 "$RATE" >/dev/null || { echo "$rtt $path: svc did not start"; return; }
	gx client "tc qdisc replace dev $IF root netem delay ${rtt}ms limit 100000"
	gx client "rm -f /tmp/$NS.tl /tmp/$NS.idle
		setsid $W/streamc -c $SVC4:7401,idle -n 1 -d $SECS -o /tmp/$NS.idle </dev/null >/dev/null 2>&1 &
		setsid python3 $top/tests/workload/bulkrecv.py $SVC4 7400 $SECS /tmp/$NS.tl </dev/null >/dev/null 2>&1 &"
	sleep "$WARM"
	migrate host1 host2
	read -r rto _ <<<"$(svc_rtos host2 7401)"
	d=$(rep .ms.downtime); d=${d%.*}
	gx -t $((SECS + 30)) client "while pgrep -f bulkrecv.py >/dev/null; do sleep 0.5; done" >/dev/null
	r=$(gx client "cat /tmp/$NS.tl")
	read -r g b1 b5 a1 a5 <<<"$(rates "$r")"
	gx client "tc qdisc del dev $IF root" >/dev/null 2>&1
	printf '%6s %-5s %7s %7s %7s %7s %7s %7s %6s %6s %7s %6s %s\n' "$rtt" "$path" "${d:--}" "$g" \
		"$b1" "$b5" "$a1" "$a5" \
		"$(awk -v a="$a1" -v b="$b1" 'BEGIN { if (b > 0) printf "%d%%", 100 * a / b; else print "-" }')" \
		"$(awk -v a="$a5" -v b="$b5" 'BEGIN { if (b > 0) printf "%d%%", 100 * a / b; else print "-" }')" \
		"${rto:--}" "$(rep .sockets.with_path)/$(( $(rep .sockets.tcp_established) + $(rep .sockets.tcp_closing) ))" \
		"$([ "$MRC" = 0 ] && echo moved || echo "rc=$MRC")"
}

printf '%6s %-5s %7s %7s %7s %7s %7s %7s %6s %6s %7s %6s %s\n' rtt_ms path down_ms gap_ms \
	"MB/s-1" "MB/s-5" "MB/s+1" "MB/s+5" "+1/-1" "+5/-5" rto_ms paths outcome
for rtt in "${rtts[@]}"; do
	for i in $(seq "$REPEAT"); do
		for path in yes no; do
			cell "$rtt" "$path"
		done
	done
done
