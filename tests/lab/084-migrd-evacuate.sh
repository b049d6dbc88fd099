#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# "migctl evacuate HOST": every namespace of a host moves, a few at a
# time, and what cannot move stays, named, with the exit status saying
# so.  host1 holds three namespaces: svc and svc2 serve verified client
# streams; svc3's address is outside what host2 allows host1, so host2
# refuses it before any freeze.
#   1. evacuate host2 parallel 2: svc and svc2 move (their clients lose
#      nothing), svc3 stays and runs on; exit 15 (refused); each
#      progress line names its namespace; the table has all three.
#   2. -j: one JSON object per line; the last is the summary.
#   3. An empty host: nothing to move, exit 0.
#   4. Back: evacuate host1 on host2 moves both, exit 0.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"

ev_teardown() {
	mig_teardown
	wipe_ns svc2 svc3
}
trap ev_teardown EXIT

# where GUEST: the namespaces GUEST's migrd manages, sorted, on one line
where() { gx "$1" "$MIGCTL -j ns list | jq -r '.data.namespaces[].name' | sort | xargs"; }

check "migrd on host1 and host2, peered" mig_setup "commit-timeout 3000"
check "svc created and serving on host1" svc_start host1 5000
check "svc2 created and serving on host1" \
	mc host1 "ns create svc2 --addr 10.77.0.181/24 --mac 52:54:00:77:01:81"
check "svc2 runs streamd" mc host1 "run svc2 -- $W/streamd -r 5000 -l [::]:7400 -s /tmp/svc2.stats"
check "svc3 created with an address host2 does not allow host1" \
	mc host1 "ns create svc3 --addr 10.88.0.5/24 --mac 52:54:00:77:01:82"
check "svc3 runs streamd" mc host1 "run svc3 -- $W/streamd -r 5000 -l [::]:7400 -s /tmp/svc3.stats"
is "$(where host1)" "svc svc2 svc3" "host1 manages the three"
gx client "rm -f /tmp/evac.report; setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' \
	-c 10.77.0.181:7400 -n 12 -r 5000 -d 0 -p 500 -o /tmp/evac.report \
	</dev/null >/tmp/evac.client 2>&1 &"
sleep 5

# --- 1. evacuate host2, two at a time
out=$(gx -t 300 host1 "$MIGCTL evacuate host2 parallel 2; echo rc=\$?")
diag "$out"
is "$(sed -n 's/^rc=//p' <<<"$out")" 15 "evacuate exits 15: a namespace was refused"
like "$out" 'evacuate host2: 3 namespaces, 2 moved, 1 stayed here' "the summary counts them"
like "$out" '^svc +moved ' "the table: svc moved"
like "$out" '^svc2 +moved ' "the table: svc2 moved"
like "$out" '^svc3 +refused ' "the table: svc3 refused"
like "$out" '^svc2 +[0-9.]+ ms  freeze ' "progress lines name their namespace"
like "$out" 'svc3 +refused, nothing changed: .*10\.88\.0\.5' "svc3's line says why, naming the address"
is "$(where host2)" "svc svc2" "host2 manages svc and svc2"
is "$(where host1)" "svc3" "host1 kept svc3 only"
check "svc3 still serves on host1" gx host1 "ip netns exec svc3 ss -Htln sport = :7400 | grep -q ."

# --- 2. the same in JSON
out=$(gx -t 120 host1 "$MIGCTL -j evacuate host2; echo rc=\$?")
rc=$(sed -n 's/^rc=//p' <<<"$out")
js=$(grep -v '^rc=' <<<"$out")
is "$rc" 15 "-j evacuate exits 15"
is "$(jq -c 'type' <<<"$js" | sort -u | xargs)" object "every line is one JSON object"
last=$(tail -1 <<<"$js")
is "$(jq -r '[.code, .data.moved, .data.stayed, .data.namespaces[0].ns, .data.namespaces[0].outcome] | join(" ")' <<<"$last")" \
	"15 0 1 svc3 refused" "the last line sums up: svc3 refused"
is "$(head -n -1 <<<"$js" | jq -r 'select(.progress == null) | .code' | xargs)" 15 \
	"svc3's own result came before the summary"

# --- 3. nothing left to move
check "svc3 deleted" mc host1 "ns delete svc3"
out=$(gx host1 "$MIGCTL evacuate host2; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "an empty host evacuates with exit 0"
like "$out" 'evacuate host2: 0 namespaces, 0 moved, 0 stayed here' "and says there was nothing"

# --- 4. back, all at once
out=$(gx -t 300 host2 "$MIGCTL evacuate host1 parallel 8; echo rc=\$?")
diag "$out"
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "evacuate host1 from host2 exits 0"
like "$out" 'evacuate host1: 2 namespaces, 2 moved, 0 stayed here' "both moved back"
is "$(where host1)" "svc svc2" "host1 manages svc and svc2 again"
is "$(where host2)" "" "host2 keeps nothing"

sleep 3
r=$(gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done; cat /tmp/evac.report")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "the clients of svc and svc2 verified every byte across both evacuations"
is "$(kv "$r" resets)$(kv "$r" mismatches)$(kv "$r" probes_failed)" 000 \
	"no reset, no wrong byte, every new connection served"
[ "$(kv "$r" verdict)" = PASS ] || diag "$(gx client 'tail -20 /tmp/evac.client')"
done_testing
