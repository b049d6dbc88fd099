#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark, all in one run (make bench): for N idle connections (default
# 1 100 1000; 10000 on request) the downtime of one migr move, against
# the floor of the repair API and against CRIU, in the same lab guests
# and with the same build (release, no sanitizers):
#
#   migr   tests/bench/scale.sh N: host1 -> host2, freeze to thaw
#   floor  tests/bench/engine-floor N: the bare repair syscalls of a dump
#          and a restore (loopback, no transfer), µs per socket times N
#   CRIU   tests/bench/criu.sh N: criu dump and restore
#          --tcp-established of streamd holding N connections, in place
#
# Prints the table as markdown with the ratios migr/floor and migr/CRIU,
# and t(N)/t(previous N), and writes $BUILD/bench/bench.json.  Each part's
# own table is kept beside it (scale-N.txt, criu.txt, floor.txt).  Needs a
# lab that is up; asserts no time.
#
#   tests/bench/bench.sh [N...]
#   tests/bench/bench.sh --table [N...]   the table again, from the files
#                                         of the last run
BUILD=${BUILD:-build/release}
. "$(dirname "$0")/../lib.sh"

run=1
[ "${1:-}" = --table ] && { run=0; shift; }
[ $# -gt 0 ] || set -- 1 100 1000
out=$top/$BUILD/bench
mkdir -p "$out"
here=$(dirname "$0")

# the floor: µs per socket (idle rows) times N, in ms
[ $run = 0 ] || "$here/engine-floor.sh" "$@" > "$out/floor.txt" 2>&1 ||
	{ cat "$out/floor.txt" >&2; echo "bench: engine-floor failed" >&2; exit 1; }
floor_ms() {
	# the first table's idle row (the second, of phases, has rows too)
	awk -v n="$1" '$1 == n && $2 == 0 { printf "%.1f", $5 * n / 1000; exit }' "$out/floor.txt"
}

[ $run = 0 ] || PLAIN_BUILD=$BUILD "$here/criu.sh" "$@" > "$out/criu.txt" 2>&1 ||
	{ cat "$out/criu.txt" >&2; echo "bench: criu.sh failed" >&2; exit 1; }
criu_ms() { jq -r --argjson n "$1" '.rows[] | select(.n == $n) | .total_ms' "$out/criu.json"; }

# ratio A B FORMAT: A/B, or "-" without a B
ratio() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (b > 0) printf f, a / b; else print "-" }'; }

rows=()
printf '| N | migr downtime ms | floor dump+restore ms | CRIU dump+restore ms | migr/floor | migr/CRIU | migr t(N)/t(prev) |\n'
printf '| --- | --- | --- | --- | --- | --- | --- |\n'
prev=
for n in "$@"; do
	if [ $run = 1 ]; then
		"$here/scale.sh" "$n" > "$out/scale-$n.txt" 2>&1 ||
			{ cat "$out/scale-$n.txt" >&2; echo "bench: scale.sh $n failed" >&2; exit 1; }
		cp "$out/scale.json" "$out/scale-$n.json"
	fi
	migr=$(jq -r '.moves[0].ms.downtime // empty' "$out/scale-$n.json")
	fl=$(floor_ms "$n")
	cr=$(criu_ms "$n")
	r_fl=$(ratio "$migr" "$fl" %.1f)
	r_cr=$(ratio "$migr" "$cr" %.2f)
	r_n=$(ratio "$migr" "$prev" %.2f)
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$migr" "$fl" "$cr" "$r_fl" "$r_cr" "$r_n"
	rows+=("$(jq -nc --argjson n "$n" --arg migr "$migr" --arg floor "$fl" --arg criu "$cr" \
		'{n: $n, migr_downtime_ms: ($migr | tonumber? // null), floor_ms: ($floor | tonumber? // null),
		  criu_ms: ($criu | tonumber? // null)}')")
	prev=$migr
done
printf '%s\n' "${rows[@]}" | jq -s '{bench: "migr vs floor vs CRIU", build: "'"$BUILD"'", rows: .}' > "$out/bench.json"
echo "# $out/bench.json; parts: floor.txt criu.txt scale-N.txt"
