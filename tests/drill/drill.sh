#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The failover drill: verified load on several namespaces while they are
# evacuated from one host to the other and back, round after round, with
# a fault injected into some rounds if asked.  Needs a lab that is up and
# the debug build the lab tests use (BUILD=build/check); "make drill"
# brings both.  Settings, from the environment:
#
#   DRILL_ROUNDS  rounds (default 10)
#   DRILL_CONNS   client connections per round, over all namespaces
#                 (default 20)
#   DRILL_NS      namespaces, 1 to 4 (default 2)
#   DRILL_FAULTS  0: none (the default); 1: about one round in three,
#                 at random, gets a fault that makes every move of the
#                 round fail before its commit (dst-refuse, dst-restore,
#                 src-freeze, src-dump), and the namespaces must stay,
#                 serving; one of those names: every even round gets it
#   DRILL_OUT     where drill.txt, drill.json and the plots go
#                 (default $BUILD/drill)
#   DRILL_SPAN    rounds one client lives through (default 1)
#
# Each round: a fresh client on every namespace (busy connections both
# ways, slow readers, half-closes from either side, a new connection
# every 500 ms), 3 s of warm-up, "migctl -j evacuate" from the host
# that holds them to the other, 6 s (the half-closes complete), the
# client's report.  With DRILL_SPAN=S a client lives through S rounds:
# its connections are moved S times, each round but the span's last
# waits 1.5 s after its move, then reads the client's interim report
# (streamc -w: the stall since the previous report), and only the
# span's last round waits the 6 s and reads the final one.  A round's
# counts are its own (the report's less the previous report's).  The
# long drill is spans: its rounds take a third of the time and its
# connections live through many moves.  A round fails when a byte was
# lost, duplicated, reordered or changed, a connection was reset or
# closed by the service unasked, a half-close did not complete (by the
# span's end), one could not be opened, a new connection was not
# served, or a namespace is not running in exactly the one place the
# round's outcome says.  The exit status is 0 when no round failed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lab/lib-migrd.sh"
. "$(dirname "$0")/../lab/lib-migrate.sh"

ROUNDS=${DRILL_ROUNDS:-10}
CONNS=${DRILL_CONNS:-20}
NNS=${DRILL_NS:-2}
FAULTS=${DRILL_FAULTS:-0}
OUT=${DRILL_OUT:-$B/drill}
SPAN=${DRILL_SPAN:-1}
RATE=2000
FAULT_LIST=(dst-refuse dst-restore src-freeze src-dump)
case $FAULTS in
0|1) ;;
*) [[ " ${FAULT_LIST[*]} " == *" $FAULTS "* ]] ||
	{ echo "drill: DRILL_FAULTS is 0, 1 or one of: ${FAULT_LIST[*]}" >&2; exit 2; } ;;
esac
for v in "$ROUNDS" "$CONNS" "$NNS" "$SPAN"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || { echo "drill: bad setting '$v'" >&2; exit 2; }
done
[ "$NNS" -le 4 ] || { echo "drill: DRILL_NS is 1 to 4" >&2; exit 2; }
mkdir -p "$OUT"
: >"$OUT/rounds.jsonl"

declare -A PREV=() C=() D=()
# what the client counts as failures (its report's keys)
FAILURES="mismatches resets eofs errors connect_failures probes_failed"
names=()
for i in $(seq 0 $((NNS - 1))); do
	names+=("$([ "$i" = 0 ] && echo svc || echo "svc$((i + 1))")")
done
n0() { [[ $1 =~ ^[0-9]+$ ]] && echo "$1" || echo 0; }
a4() { echo "10.77.0.$((180 + $1))"; }
a6() { echo "fd00:77::$((180 + $1))"; }

drill_teardown() {
	gx client "pkill -x streamc" >/dev/null 2>&1
	mig_teardown
	wipe_ns "${names[@]}"
}
trap drill_teardown EXIT

# holders: where each namespace runs, in the order of names, one word
# each: the host whose migrd manages it and runs its workload, "?"
# unless exactly one (the two hosts asked at once, one exec each: a
# round of the long drill spends less on asking than on moving)
held_on() {
	gx "$1" "$MIGCTL -j ns list | jq -r '.data.namespaces[].name' | while read -r n; do
		ip netns pids \$n | grep -q . && echo \$n; done"
}
holders() {
	local h1 h2 n out
	h2=$(mktemp)
	held_on host2 >"$h2" &
	h1=$(held_on host1)
	wait $!
	h2=$(cat "$h2"; rm -f "$h2")
	for n in "${names[@]}"; do
		out=""
		grep -qx "$n" <<<"$h1" && out="host1"
		grep -qx "$n" <<<"$h2" && out="$out${out:+ }host2"
		[[ $out == host? ]] && echo "$out" || echo "?"
	done
}

setup() {
	local i n
	mig_setup "commit-timeout 3000" >/dev/null || return 1
	for i in "${!names[@]}"; do
		n=${names[$i]}
		mc host1 "ns create $n --addr $(a4 "$i")/24 --addr $(a6 "$i")/64 --mac 52:54:00:77:01:$((80 + i))" >/dev/null &&
			mc host1 "run $n -- $(NS=$n serve_cmd $RATE)" >/dev/null &&
			NS=$n svc_listening host1 || return 1
	done
}

# client_args: every namespace's targets for one streamc
client_args() {
	local i
	for i in "${!names[@]}"; do
		printf -- "-c %s:7400 -c '[%s]:7400,readrate=%d' -c %s:7402,halfclose=2 -c %s:7403,peershut " \
			"$(a4 "$i")" "$(a6 "$i")" $((RATE / 2)) "$(a4 "$i")" "$(a4 "$i")"
	done
}

# round N FROM TO: one line of drill.txt, one object of rounds.jsonl
round() {
	local n=$1 from=$2 to=$3 fault="" fhost="" ev rc r dt moved stayed want ok=1 where="" x
	local first last t0 evac_ms
	if [ "$FAULTS" = 1 ] && [ $((RANDOM % 3)) = 0 ]; then
		fault=${FAULT_LIST[$((RANDOM % ${#FAULT_LIST[@]}))]}
	elif [ "$FAULTS" != 0 ] && [ "$FAULTS" != 1 ] && [ $((n % 2)) = 0 ]; then
		fault=$FAULTS
	fi
	if [ -n "$fault" ]; then
		[[ $fault == dst-* ]] && fhost=$to || fhost=$from
		restart "$fhost" "$fault" >/dev/null || ok=0
	fi
	# the span's first round starts a client, its last one ends it
	first=$(( (n - 1) % SPAN == 0 )) last=$(( n % SPAN == 0 || n == ROUNDS ))
	if [ "$first" = 1 ]; then
		gx client "rm -f /tmp/drill.report; setsid $W/streamc $(client_args) -n $CONNS -r $RATE -d 0 -p 500 -w \
			-o /tmp/drill.report </dev/null >/tmp/drill.client 2>&1 &"
		sleep 3
		PREV=()
	fi
	t0=$(date +%s%N)
	ev=$(gx -t 600 "$from" "$MIGCTL -j evacuate $to parallel $NNS; echo rc=\$?")
	evac_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	rc=$(sed -n 's/^rc=//p' <<<"$ev")
	if [ "$last" = 1 ]; then
		# long enough for the half-closes under way to complete: the
		# service lingers 2 s after the client's, and shuts its own 4 s in
		sleep 6
		r=$(gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done; cat /tmp/drill.report")
	else
		# the interim report (a new file replaces the old one whole),
		# once the moved connections have run a while
		sleep 1.5
		r=$(gx client "rm -f /tmp/drill.report; pkill -USR1 -x streamc; for i in \$(seq 50); do [ -s /tmp/drill.report ] && break; sleep 0.1; done; cat /tmp/drill.report")
	fi
	[ -z "$fhost" ] || restart "$fhost" >/dev/null || ok=0
	x=$(grep -v '^rc=' <<<"$ev" | tail -1)
	moved=$(jq -r '.data.moved // 0' <<<"$x" 2>/dev/null)
	stayed=$(jq -r '.data.stayed // 0' <<<"$x" 2>/dev/null)
	# the longest downtime of the round's moves
	dt=$(grep -v '^rc=' <<<"$ev" | jq -s '[.[] | select(.data.ms.downtime != null) | .data.ms.downtime] | max // null' 2>/dev/null)
	# without a fault everything moves; with one, everything stays
	if [ -z "$fault" ]; then want=$to; [ "$rc" = 0 ] || ok=0
	else want=$from; [ "${moved:-1}" = 0 ] || ok=0; fi
	for x in $(holders); do
		where="$where${where:+,}$x"
		[ "$x" = "$want" ] || ok=0
	done
	ROUND_WHERE=${where%%,*}
	# this round's counts: the client's are the span's so far
	C[bytes]=$(( $(n0 "$(kv "$r" tx_bytes)") + $(n0 "$(kv "$r" rx_bytes)") ))
	for x in $FAILURES probes_ok; do C[$x]=$(n0 "$(kv "$r" $x)"); done
	for x in "${!C[@]}"; do D[$x]=$(( C[$x] - ${PREV[$x]:-0} )); PREV[$x]=${C[$x]}; done
	# the client's verdict, for this round alone: every failure it
	# counted since the previous report, and at the span's end the
	# half-closes that never completed (before, they are owed, not
	# failed); a client that wrote no report failed
	[ -n "$(kv "$r" verdict)" ] || ok=0
	for x in $FAILURES; do [ "${D[$x]}" = 0 ] || ok=0; done
	[ "$last" = 0 ] || [ "$(kv "$r" closes_pending)" = 0 ] || ok=0
	printf '%5d  %s -> %s  %-12s %3s %5s %5s %10s %8s %10s %6s %6s %5s  %s\n' "$n" "$from" "$to" \
		"${fault:--}" "${rc:-?}" "${moved:-?}" "${stayed:-?}" "${dt:-null}" "$(kv "$r" longest_stall_ms)" \
		"${D[bytes]}" "${D[resets]}" \
		"${D[mismatches]}" "${D[probes_failed]}" "$([ $ok = 1 ] && echo ok || echo "FAIL ($where)")" |
		tee -a "$OUT/drill.txt"
	jq -nc --argjson n "$n" --arg from "$from" --arg to "$to" --arg fault "$fault" \
		--arg rc "${rc:-}" --arg moved "${moved:-}" --arg stayed "${stayed:-}" --arg dt "$dt" \
		--arg stall "$(kv "$r" longest_stall_ms)" --argjson bytes "${D[bytes]}" --argjson evac "$evac_ms" \
		--argjson resets "${D[resets]}" --argjson mism "${D[mismatches]}" \
		--argjson probes "${D[probes_ok]}" --argjson pfail "${D[probes_failed]}" \
		--arg where "$where" --argjson ok "$ok" --arg client "$r" '
		def num: if . == "" or . == "null" then null else tonumber end;
		{round: $n, from: $from, to: $to, fault: (if $fault == "" then null else $fault end),
		 exit: ($rc | num), moved: ($moved | num), stayed: ($stayed | num),
		 downtime_ms: ($dt | num), stall_ms: ($stall | num), evacuate_ms: $evac,
		 bytes_verified: $bytes, resets: $resets, wrong_bytes: $mism,
		 probes_served: $probes, probes_failed: $pfail,
		 where: $where, ok: ($ok == 1), client: $client}' >>"$OUT/rounds.jsonl"
	[ "$ok" = 1 ] || diag "round $n: client: $r
$(gx client 'tail -5 /tmp/drill.client')
$(grep -v '"progress"' <<<"$ev" | tail -4)"
}

plots() {
	local d=$OUT
	jq -r '[.round, (.downtime_ms // "NaN"), (.stall_ms // "NaN")] | @tsv' "$d/rounds.jsonl" >"$d/rounds.tsv"
	gnuplot <<-GP 2>/dev/null
	set terminal png size 900,450
	set datafile missing "NaN"
	set output "$d/drill-rounds.png"
	set title "migr drill: $ROUNDS rounds, $NNS namespaces, $CONNS connections"
	set xlabel "round"; set ylabel "ms"; set key top left
	plot "$d/rounds.tsv" using 1:2 with linespoints title "downtime (longest move)", \
	     "$d/rounds.tsv" using 1:3 with linespoints title "longest stall a client saw"
	set output "$d/drill-distribution.png"
	set title "migr drill: distribution"
	set xlabel "ms (bins of 250)"; set ylabel "rounds"; set style fill solid 0.5
	bin(x) = 250 * floor(x / 250) + 125
	plot "$d/rounds.tsv" using (bin(\$2)):(1) smooth frequency with boxes title "downtime", \
	     "$d/rounds.tsv" using (bin(\$3)):(1) smooth frequency with boxes title "stall"
	GP
}

if ! setup; then
	echo "drill: setup failed" >&2
	exit 1
fi
{
	echo "migr drill: $ROUNDS rounds, namespaces ${names[*]}, $CONNS connections, faults: $FAULTS"
	printf '%5s  %-14s  %-12s %3s %5s %5s %10s %8s %10s %6s %6s %5s  %s\n' round move fault rc moved stayed \
		downtime stall bytes resets wrong probe verdict
} | tee "$OUT/drill.txt"
from=host1 to=host2
for n in $(seq 1 "$ROUNDS"); do
	round "$n" "$from" "$to"
	# the next round starts where the namespaces are
	[ "$ROUND_WHERE" = "$to" ] && { x=$from; from=$to; to=$x; }
done
jq -s --argjson ns "$NNS" --argjson conns "$CONNS" --arg faults "$FAULTS" '{
	rounds: length, namespaces: $ns, connections: $conns, faults: $faults,
	failed_rounds: [.[] | select(.ok | not)] | length,
	fault_rounds: [.[] | select(.fault != null)] | length,
	moves: [.[] | .moved // 0] | add,
	resets: [.[] | .resets // 0] | add,
	wrong_bytes: [.[] | .wrong_bytes // 0] | add,
	probes_failed: [.[] | .probes_failed // 0] | add,
	bytes_verified: [.[] | .bytes_verified] | add,
	downtime_ms: ([.[] | .downtime_ms | select(. != null)] | if length > 0 then
		{min: min, median: (sort | .[length / 2 | floor]), max: max} else null end),
	stall_ms: ([.[] | .stall_ms | select(. != null)] | if length > 0 then
		{min: min, median: (sort | .[length / 2 | floor]), max: max} else null end),
	rounds_detail: .}' "$OUT/rounds.jsonl" >"$OUT/drill.json"
jq -r '"total: \(.rounds) rounds, \(.failed_rounds) failed, \(.fault_rounds) with a fault, \(.moves) moves, \(.bytes_verified) bytes verified, \(.resets) resets, \(.wrong_bytes) bytes lost/duplicated/reordered/changed, \(.probes_failed) new connections not served; downtime ms min/median/max \(.downtime_ms.min)/\(.downtime_ms.median)/\(.downtime_ms.max), stall ms \(.stall_ms.min)/\(.stall_ms.median)/\(.stall_ms.max)"' \
	"$OUT/drill.json" | tee -a "$OUT/drill.txt"
plots && echo "plots: $OUT/drill-rounds.png $OUT/drill-distribution.png"
echo "report: $OUT/drill.txt $OUT/drill.json"
[ "$(jq .failed_rounds "$OUT/drill.json")" = 0 ]
