#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark, all in one run (make bench): for N connections (default
# 1 100 1000 10000), idle and with about 4 KiB queued each way, the
# downtime of one migr move against the floor of the repair API and
# against CRIU, in the same lab guests and with the same build (release,
# no sanitizers):
#
#   migr   tests/bench/scale.sh N: host1 -> host2, lock to thaw, and
#          back; SCALE_QUEUE=4096 for the queued rows
#   floor  tests/bench/engine-floor -q 0|4096 N: the bare repair syscalls
#          of a dump and a restore (loopback, no transfer), µs per socket
#          times N
#   CRIU   tests/bench/criu.sh N: criu dump and restore
#          --tcp-established of streamd holding N idle connections, in
#          place
#
# Prints two tables as markdown (the downtimes with the ratios migr/floor,
# migr/CRIU and t(N)/t(previous N); migr's phases) and the goals of
# issue 16 against the largest N, writes $BUILD/bench/bench.json and two
# plots, bench-downtime.png and bench-phases.png (gnuplot; the phases
# overlap, so the second shows each as a share of their sum).  Each part's
# own output is kept beside them (floor-idle.txt, floor-q4096.txt,
# criu.txt, scale-N.txt, scale-q4096-N.txt).  A part that fails leaves
# its cells "-" and the run goes on; the exit status is then 1.  Needs a
# lab that is up; asserts no time.
#
#   tests/bench/bench.sh [N...]
#   tests/bench/bench.sh --table [N...]   the tables and plots again, from
#                                         the files of the last run
BUILD=${BUILD:-build/release}
. "$(dirname "$0")/../lib.sh"

run=1
[ "${1:-}" = --table ] && { run=0; shift; }
[ $# -gt 0 ] || set -- 1 100 1000 10000
Q=4096
out=$top/$BUILD/bench
mkdir -p "$out"
here=$(dirname "$0")
rc=0

part() {	# FILE CMD...: run a part into FILE, say so if it fails
	local f=$1
	shift
	[ $run = 1 ] || return 0
	if ! "$@" > "$f" 2>&1; then
		echo "# bench: $* failed (its output: $f)" >&2
		tail -5 "$f" | sed 's/^/#   /' >&2
		rc=1
	fi
}

# the floor: µs per socket times N, in ms
part "$out/floor-idle.txt" "$here/engine-floor.sh" -q 0 "$@"
part "$out/floor-q$Q.txt" "$here/engine-floor.sh" -q $Q "$@"
floor_ms() {	# N QUEUED
	# the first table's row (the second, of phases, has rows too)
	awk -v n="$1" -v q="$2" '$1 == n && $2 == q { printf "%.1f", $5 * n / 1000; exit }' \
		"$out/floor-$([ "$2" = 0 ] && echo idle || echo "q$2").txt" 2>/dev/null
}

[ $run = 0 ] || rm -f "$out/criu.json"
part "$out/criu.txt" env PLAIN_BUILD="$BUILD" "$here/criu.sh" "$@"
criu_ms() { jq -r --argjson n "$1" '.rows[] | select(.n == $n) | .total_ms' "$out/criu.json" 2>/dev/null; }

for n in "$@"; do
	for q in 0 $Q; do
		f=scale-$n
		[ $q = 0 ] || f=scale-q$q-$n
		[ $run = 0 ] || rm -f "$out/scale.json" "$out/$f.json"
		part "$out/$f.txt" env SCALE_QUEUE=$q "$here/scale.sh" "$n"
		[ $run = 0 ] || [ ! -s "$out/scale.json" ] || cp "$out/scale.json" "$out/$f.json"
	done
done
# FILE JQ: a figure of the first move, or nothing
move1() { jq -r ".moves[0].$2 // empty" "$out/$1.json" 2>/dev/null; }
# ratio A B FORMAT: A/B, or "-" without both
ratio() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (a > 0 && b > 0) printf f, a / b; else print "-" }'; }
or_dash() { echo "${1:--}"; }

rows=() prev= last=
printf '| N | migr idle ms | migr 4 KiB ms | floor idle ms | floor 4 KiB ms | CRIU idle ms | migr/floor idle | migr/floor 4 KiB | migr/CRIU | t(N)/t(prev) idle |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
: > "$out/bench.dat"
for n in "$@"; do
	mi=$(move1 "scale-$n" ms.downtime)
	mq=$(move1 "scale-q$Q-$n" ms.downtime)
	fi=$(floor_ms "$n" 0)
	fq=$(floor_ms "$n" $Q)
	cr=$(criu_ms "$n")
	r_fi=$(ratio "$mi" "$fi" %.1f)
	r_fq=$(ratio "$mq" "$fq" %.1f)
	r_cr=$(ratio "$mi" "$cr" %.2f)
	r_n=$(ratio "$mi" "$prev" %.2f)
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$(or_dash "$mi")" \
		"$(or_dash "$mq")" "$(or_dash "$fi")" "$(or_dash "$fq")" "$(or_dash "$cr")" \
		"$r_fi" "$r_fq" "$r_cr" "$r_n"
	# for gnuplot: N and each figure, "?" where there is none
	printf '%s %s %s %s %s %s\n' "$n" "${mi:-?}" "${mq:-?}" "${fi:-?}" "${fq:-?}" "${cr:-?}" >> "$out/bench.dat"
	rows+=("$(jq -nc --argjson n "$n" --arg mi "$mi" --arg mq "$mq" --arg fi "$fi" \
		--arg fq "$fq" --arg cr "$cr" --argjson qb "$(jq -c '.queued_before // null' \
		"$out/scale-q$Q-$n.json" 2>/dev/null || echo null)" \
		'{n: $n, migr_downtime_ms: ($mi | tonumber? // null),
		  migr_queued_downtime_ms: ($mq | tonumber? // null), queued_before: $qb,
		  floor_ms: ($fi | tonumber? // null), floor_queued_ms: ($fq | tonumber? // null),
		  criu_ms: ($cr | tonumber? // null)}')")
	last=$prev
	prev=$mi
done

echo
printf '| N | queued | sockets | queued per socket in / out | freeze | dump | transfer | restore | commit | downtime ms | on the channel per socket |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
: > "$out/phases.dat"
for n in "$@"; do
	for q in 0 $Q; do
		f=scale-$n
		[ $q = 0 ] || f=scale-q$q-$n
		[ -s "$out/$f.json" ] || continue
		s=$(move1 "$f" sockets.total)
		qb=$(jq -r --argjson n "$n" 'if .queue > 0 then "\(.queued_before.rx / $n | floor) / \(.queued_before.tx / $n | floor)" else "-" end' "$out/$f.json")
		st=$(move1 "$f" bytes.streamed) qd=$(move1 "$f" bytes.queued)
		# the records alone: queued bytes, compressed on the channel,
		# have no per-socket figure of their own
		per=$(awk -v a="${st:-0}" -v b="${qd:-0}" -v s="${s:-0}" -v q=$q 'BEGIN { if (s > 0 && q == 0) printf "%d", (a - b) / s; else print "-" }')
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" \
			"$([ $q = 0 ] && echo idle || echo "$q B")" "$(or_dash "$s")" "$qb" \
			"$(or_dash "$(move1 "$f" ms.freeze)")" "$(or_dash "$(move1 "$f" ms.dump)")" \
			"$(or_dash "$(move1 "$f" ms.transfer)")" "$(or_dash "$(move1 "$f" ms.restore)")" \
			"$(or_dash "$(move1 "$f" ms.commit)")" "$(or_dash "$(move1 "$f" ms.downtime)")" "$per"
		[ $q != 0 ] || printf '%s %s %s %s %s %s %s\n' "$n" "$(move1 "$f" ms.freeze)" \
			"$(move1 "$f" ms.dump)" "$(move1 "$f" ms.transfer)" "$(move1 "$f" ms.restore)" \
			"$(move1 "$f" ms.commit)" "$(move1 "$f" ms.downtime)" >> "$out/phases.dat"
	done
done

# the goals (issue 16) against the two largest N
nl=${*: -1}
echo
if [ $# -ge 2 ]; then
	np=${*: -2:1}
	echo "# growth t($nl)/t($np), idle: $(ratio "$prev" "$last" %.2f) (goal at 10000/1000: <= 11)"
fi
echo "# migr/floor at N = $nl, idle: $(ratio "$prev" "$(floor_ms "$nl" 0)" %.2f) (goal at 10000: <= 1.0)"
echo "# migr/CRIU at N = $nl, idle: $(ratio "$prev" "$(criu_ms "$nl")" %.2f) (goal: <= 0.2)"

printf '%s\n' "${rows[@]}" | jq -s --arg build "$BUILD" --argjson q $Q \
	'{bench: "migr vs floor vs CRIU", build: $build, queue: $q, rows: .}' > "$out/bench.json"

if command -v gnuplot >/dev/null; then
	gnuplot <<-GP 2>"$out/gnuplot.err" || echo "# bench: gnuplot failed, see $out/gnuplot.err" >&2
		set terminal pngcairo size 900,560 noenhanced
		set datafile missing "?"
		set output "$out/bench-downtime.png"
		set title "Downtime of one move against N connections (TCG lab, $BUILD)"
		set logscale xy
		set xlabel "connections"
		set ylabel "ms"
		set key bottom right
		set grid
		plot "$out/bench.dat" using 1:2 with linespoints title "migr, idle", \
		     "" using 1:3 with linespoints title "migr, 4 KiB queued each way", \
		     "" using 1:4 with linespoints title "floor (repair syscalls), idle", \
		     "" using 1:5 with linespoints title "floor, 4 KiB queued", \
		     "" using 1:6 with linespoints title "CRIU dump+restore, idle, in place"
		set output "$out/bench-phases.png"
		unset logscale
		# the phases overlap (the destination restores while records
		# stream in): each is shown as its share of their sum
		set title "migr's phases of one move, idle connections (share of their sum; they overlap)"
		set style data histograms
		set style histogram rowstacked
		set style fill solid 0.8 border -1
		set boxwidth 0.6
		set key outside right top
		set yrange [0:100]
		set xlabel "connections"
		set ylabel "% of the phases' sum"
		sum(a, b, c, d, e) = a + b + c + d + e
		plot "$out/phases.dat" using (100*\$2/sum(\$2,\$3,\$4,\$5,\$6)):xtic(1) title "freeze", \
		     "" using (100*\$3/sum(\$2,\$3,\$4,\$5,\$6)) title "dump", \
		     "" using (100*\$4/sum(\$2,\$3,\$4,\$5,\$6)) title "transfer", \
		     "" using (100*\$5/sum(\$2,\$3,\$4,\$5,\$6)) title "restore", \
		     "" using (100*\$6/sum(\$2,\$3,\$4,\$5,\$6)) title "commit"
	GP
	echo "# $out/bench-downtime.png $out/bench-phases.png"
else
	echo "# bench: no gnuplot, no plots (make deps installs it)" >&2
fi
echo "# $out/bench.json; parts: floor-idle.txt floor-q$Q.txt criu.txt scale-N.txt scale-q$Q-N.txt"
exit $rc
