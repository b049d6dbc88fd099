#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A short failover drill (tests/drill/drill.sh, "make drill" is the long
# one): two namespaces under verified load, three rounds of "migctl
# evacuate": host1 -> host2, then a round whose every move fails on
# host1 (fault dst-restore: the namespaces stay on host2, serving), then
# host2 -> host1.  The drill's own verdict, its JSON totals and its plots
# are checked here.  Then the same three rounds as one span
# (DRILL_SPAN=3): one client lives through all three, its connections
# moved twice, and each round reads its own figures from the client's
# interim reports.
. "$(dirname "$0")/../lib.sh"
out=$B/drill-check
rm -rf "$out"
r=$(DRILL_ROUNDS=3 DRILL_CONNS=16 DRILL_NS=2 DRILL_FAULTS=dst-restore DRILL_OUT=$out \
	bash "$top/tests/drill/drill.sh" 2>&1)
rc=$?
diag "$r"
is "$rc" 0 "the drill passes: no round failed"
j=$out/drill.json
is "$(jq -r '[.rounds, .failed_rounds, .fault_rounds, .moves] | join(" ")' "$j")" "3 0 1 4" \
	"3 rounds, none failed, 1 with a fault, 4 moves (2 namespaces, 2 rounds)"
is "$(jq -r '[.resets, .wrong_bytes, .probes_failed] | join(" ")' "$j")" "0 0 0" \
	"no reset, no byte lost, duplicated, reordered or changed, every new connection served"
like "$(jq -r .bytes_verified "$j")" '^[1-9][0-9]{4,}$' "the clients verified bytes (at least 10 kB)"
is "$(jq -r '.rounds_detail[1] | [.fault, .moved, .stayed, .where] | join(" ")' "$j")" \
	"dst-restore 0 2 host2,host2" "round 2: every move failed, both stayed on host2"
is "$(jq -r '.rounds_detail | map(.where) | join(" ")' "$j")" \
	"host2,host2 host2,host2 host1,host1" "where the namespaces ran after each round"
like "$(jq -r '.downtime_ms.max' "$j")" '^[0-9.]+$' "the totals have the downtime"
like "$(tail -3 "$out/drill.txt")" '^total: 3 rounds, 0 failed' "drill.txt ends with the totals"
for p in drill-rounds drill-distribution; do
	like "$(file -b "$out/$p.png")" '^PNG image' "$p.png is a PNG"
done

# one client through the three rounds (the drill makes the namespaces
# on host1 again)
rm -rf "$out"
r=$(DRILL_ROUNDS=3 DRILL_CONNS=16 DRILL_NS=2 DRILL_FAULTS=dst-restore DRILL_SPAN=3 DRILL_OUT=$out \
	bash "$top/tests/drill/drill.sh" 2>&1)
rc=$?
diag "$r"
is "$rc" 0 "span of 3: the drill passes"
is "$(jq -r '[.rounds, .failed_rounds, .fault_rounds, .moves, .resets, .wrong_bytes, .probes_failed] | join(" ")' "$j")" \
	"3 0 1 4 0 0 0" "span of 3: 3 rounds, none failed, 1 with a fault, 4 moves, nothing lost or reset"
is "$(jq -r '.rounds_detail | map(.where) | join(" ")' "$j")" \
	"host2,host2 host2,host2 host1,host1" "span of 3: where the namespaces ran after each round"
# each round's bytes are its own, not the span's so far: every round
# verified some, and the rounds add up to the client's final count
is "$(jq -r '[.rounds_detail[] | select(.bytes_verified > 0)] | length' "$j")" 3 \
	"span of 3: every round verified bytes of its own"
x=$(jq -r '.rounds_detail[2].client' "$j")
is "$(jq -r '[.rounds_detail[].bytes_verified] | add' "$j")" \
	"$(( $(kv "$x" tx_bytes) + $(kv "$x" rx_bytes) ))" "span of 3: the rounds' bytes add up to the client's total"
is "$(kv "$x" verdict) $(kv "$x" closes_pending)" "PASS 0" \
	"span of 3: the client's final verdict is PASS with every half-close completed"
is "$(jq -r '[.rounds_detail[] | select(.client | test("verdict=")) ] | length' "$j")" 3 \
	"span of 3: a report was read in every round"
done_testing
