#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A gated workload ("migctl run NS --gate"): the destination starts the
# program when the last record is restored, before COMMIT, with its
# sockets still in repair and MIGR_GATE_FD in its environment; the
# program sets itself up and waits for one byte there, which migrd
# writes once every socket is live.  The restart no longer follows
# going live.  Checked here:
#  - on each move the destination's log has the gated start before the
#    commit point, streamd's own log the gate opening, and the pid the
#    report gives is that program's;
#  - the flag travels with the namespace ("ns show" after two moves);
#  - a move undone after the gated start (host2 holds READY, the
#    operator cancels) kills the waiting program, which touched nothing:
#    host1 serves on, host2 keeps no process;
#  - a gated program that cannot start on host2 rolls the move back
#    with host2's reason, though READY has gone;
#  - a client with busy, idle and half-closed connections over all of it
#    reads every byte with no reset.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT
wl_log() { gx "$1" "cat /var/log/migr/$NS.log 2>/dev/null"; }

check "migrd on host1 and host2, peered" mig_setup "commit-timeout 1000" "migrate-timeout 8"
gx host1 "rm -f /var/log/migr/$NS.log*"; gx host2 "rm -f /var/log/migr/$NS.log*"
check "svc created on host1" mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80"
out=$(mc host1 "run $NS --gate -- $(serve_cmd 20000)")
like "$out" "gated when it moves" "migctl run --gate says the workload is gated"
check "streamd listens" svc_listening host1
like "$(mc host1 "ns show $NS")" "workload: pid [0-9]+ running \(gated\)" "ns show marks it gated"
out=$(mc host1 "run $NS --gate --checkpoint -- /bin/true 2>&1; echo rc=\$?")
like "$out" "rc=2" "--gate and --checkpoint together: a usage error"
client_start 6 0 20000
sleep 3

# gated_move FROM TO N: a move whose destination starts the program
# gated, before the commit point
gates() { wl_log "$1" | grep -c "streamd: gate opened after [0-9]* ms"; }
gated_move() {
	local log pid started commit before
	before=$(gates "$2")
	migrate "$1" "$2"
	diag "$MOUT"
	is "$MRC" 0 "move $3 ($1 -> $2) exits 0"
	is "$(svc_where)" "$2" "after move $3 svc runs on $2 only"
	log=$(migrd_log "$2" | grep "$(rep .mig)")
	pid=$(sed -n "s/.*gated workload started, pid \([0-9]*\).*/\1/p" <<<"$log" | tail -1)
	like "$pid" '^[0-9]+$' "move $3: $2 started the gated workload (pid $pid)"
	started=$(grep -n "gated workload started" <<<"$log" | tail -1 | cut -d: -f1)
	commit=$(grep -n "rx-commit: ready -> live" <<<"$log" | tail -1 | cut -d: -f1)
	if [ -n "$started" ] && [ -n "$commit" ] && [ "$started" -lt "$commit" ]; then
		pass "move $3: it started before the commit point"
	else
		fail "move $3: started at log line ${started:-?}, commit at ${commit:-?}"
	fi
	is "$(sed -n 's/.*workload pid \([0-9]*\).*/\1/p' <<<"$MOUT" | tail -1)" "$pid" \
		"move $3: the workload pid migctl reports is that program"
	is "$(gates "$2")" $((before + 1)) \
		"move $3: the program waited at its gate until its sockets were live"
}
gated_move host1 host2 1
gated_move host2 host1 2
like "$(mc host1 "ns show $NS")" "workload: pid [0-9]+ running \(gated\)" \
	"after two moves the workload is still gated"

# --- undone after the gated start: host2 holds READY back, then cancel
check "host2 holds READY back" restart host2 dst-ready-hold
before=$(gates host2)
started=$(migrd_log host2 | grep -c "gated workload started")
gx host1 "setsid sh -c '$MIGCTL migrate $NS host2 >/tmp/$NS.mig 2>&1; echo rc=\$? >>/tmp/$NS.mig' </dev/null >/dev/null 2>&1 &"
ok=0
for i in $(seq 100); do
	[ "$(migrd_log host2 | grep -c "gated workload started")" -gt "$started" ] && { ok=1; break; }
	sleep 0.1
done
is "$ok" 1 "host2 started the gated program (and holds READY)"
gpid=$(migrd_log host2 | sed -n "s/.*gated workload started, pid \([0-9]*\).*/\1/p" | tail -1)
st=$(gx host2 "grep State /proc/$gpid/status; echo wchan \$(cat /proc/$gpid/wchan 2>/dev/null)")
diag "$st"
like "$st" "State:.*S \(sleeping\)" "the program waits (pid $gpid), its sockets in repair"
out=$(mc host1 "cancel $NS; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "migctl cancel exits 0"
for i in $(seq 100); do gx host1 "grep -q ^rc= /tmp/$NS.mig" && break; sleep 0.1; done
is "$(gx host1 "sed -n 's/^rc=//p' /tmp/$NS.mig")" 16 "the move ends rolled back (16)"
for i in $(seq 50); do gx host2 "[ ! -e /proc/$gpid ]" && break; sleep 0.1; done
is "$(gx host2 "[ -e /proc/$gpid ] && echo alive || echo gone")" gone "host2 killed the waiting program"
is "$(gx host2 "pgrep -x streamd | wc -l")" 0 "no streamd is left on host2"
is "$(gates host2)" "$before" "it never went past its gate"
is "$(svc_where)" host1 "svc runs on host1 only"

# --- a gated program that cannot start there: READY has gone, so the
# COMMIT that crosses host2's FAILED is answered ABORTED, with its reason
check "host2 will not find the program" restart host2 dst-exec-fail
migrate host1 host2
diag "$MOUT"
is "$MRC" 16 "a gated program that cannot start: rolled back (16)"
like "$(rep .reason)" "host2 cannot start svc's workload" "and the report says why ($(rep .reason))"
is "$(svc_where)" host1 "svc runs on host1 only"
check "migrd on host2 without faults" restart host2

# --- the client, through all of it
sleep 2
gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done"
r=$(gx client "cat /tmp/$NS.report")
check_client "$r" "over two gated moves and an undone one"
done_testing
