#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Failures before the commit point leave the service on host1 exactly as
# it was: one is injected at each phase (MIGRD_FAULT, see docs/testing.md),
# the state file failing to take a vital step (the freeze, the decision
# to commit, going live) among them,
# while a client keeps 12 connections busy, and after each svc must run
# on host1 only, thawed and unlocked, with nothing left on host2.  Then
# the commit point: host2 dies on COMMIT, host1 stays in doubt (frozen,
# locked, "migctl status" says so) until host2 comes back and answers
# "aborted", or until "migctl resolve" ends it.  The client must see no
# reset and no wrong byte through all of it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT
# the cancel cell asks for ARP and neighbour answers inside this window,
# from the freeze on: in a busy TCG guest under ASan that took 4.4 s once
TIMEOUT=8
check "migrd on host1 and host2, peered" mig_setup "commit-timeout 1000" "migrate-timeout $TIMEOUT"
check "svc serving on host1" svc_start host1 20000 600
gx client "rm -f /tmp/$NS.report; setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' -c $SVC4:7401,idle \
	-n 12 -r 20000 -d 0 -p 500 -o /tmp/$NS.report </dev/null >/tmp/$NS.client 2>&1 &"
capture_start
sleep 4

# untouched WHAT: svc on host1 only, thawed, unlocked, none on host2
untouched() {
	local i
	for i in $(seq $((TIMEOUT * 5 + 10))); do	# host2 may wait its timeout
		gx host2 "[ ! -e /run/netns/$NS ] && ! ip link show v$NS >/dev/null 2>&1" && break
		sleep 0.2
	done
	is "$(svc_where)" host1 "$1: svc runs on host1 only"
	is "$(gx host1 "grep frozen $CG/cgroup.events; ip netns exec $NS nft list tables | grep -c migr_lock")" \
		"frozen 0
0" "$1: host1 is thawed and unlocked"
	is "$(gx host2 "ls /run/netns; ip -br link show v$NS 2>/dev/null; $MIGCTL -j status | jq '.data.migrations | length'")" \
		"0" "$1: host2 kept nothing and has no migration"
	is "$(gx host1 "$MIGCTL -j status | jq '.data.migrations | length'")" 0 "$1: host1 has no migration left"
}

# bg GUEST ARGS: "migctl ARGS" in the background on GUEST, its output and
# then "rc=N" in /tmp/bg.out
bg() {
	local g=$1
	shift
	gx "$g" "rm -f /tmp/bg.out; setsid sh -c '$MIGCTL $* >/tmp/bg.out 2>&1; echo rc=\$? >>/tmp/bg.out' </dev/null >/dev/null 2>&1 &"
}
# bg_wait GUEST SECONDS: until that migctl ended; bg_out GUEST: what it
# printed
bg_wait() {
	gx -t $(($2 + 30)) "$1" "for i in \$(seq $(($2 * 10))); do grep -q '^rc=' /tmp/bg.out && exit 0; sleep 0.1; done; exit 1"
}
bg_out() { gx "$1" "cat /tmp/bg.out"; }
# timed_state GUEST: the first migration's state in GUEST's migctl status
# (ST), and how long migctl took to answer (MS)
timed_state() {
	local t0
	t0=$(date +%s%N)
	ST=$(gx "$1" "$MIGCTL -j status | jq -r '.data.migrations[0].state // empty'")
	MS=$((($(date +%s%N) - t0) / 1000000))
}

for f in "host2 dst-refuse 15 refused" "host1 src-freeze 16 rolled-back" \
	"host1 src-dump 16 rolled-back" "host1 channel-drop 16 rolled-back" \
	"host2 dst-restore 16 rolled-back" "host2 dst-ready-hold 16 rolled-back" \
	"host1 persist-frozen 15 refused" "host1 persist-freeze 16 rolled-back" \
	"host2 persist-prepare 15 refused" \
	"host1 persist-committing 16 rolled-back" "host2 persist-live 16 rolled-back" \
	"host2 dst-exec-fail 16 rolled-back" "host2 dst-attach-fail 16 rolled-back"; do
	set -- $f
	check "$2: migrd on $1 restarted with the fault" restart "$1" "$2"
	migrate host1 host2
	diag "$MOUT"
	is "$MRC" "$3" "$2: migctl migrate exits $3"
	is "$(rep .outcome)" "$4" "$2: the report says $4"
	like "$(rep .reason)" '.' "$2: and why ($(rep .reason))"
	# the workload that would not start is named, not just "aborted"
	[ "$2" = dst-exec-fail ] && like "$(rep .reason)" "host2 cannot start svc's workload" \
		"$2: ABORTED carries host2's reason"
	# past the commit point, before any socket left repair: undone
	[ "$2" = persist-prepare ] && like "$(rep .reason)" "host2 cannot write its state" \
		"$2: refused by host2 before anything was built"
	[ "$2" = dst-attach-fail ] && like "$(rep .reason)" "host2 could not go live, undone" \
		"$2: host2 undid its commit and said why"
	untouched "$2"
	check "$2: migrd on $1 restarted without faults" restart "$1"
done

# --- a freeze that does not finish (as with a task in an uninterruptible
# sleep: src-freeze-slow): migrd waits for it from its event loop, so it
# answers migctl and keeps its peer sessions meanwhile; after 5 s the
# move is rolled back and svc thawed
check "host1's freezes will not finish" restart host1 src-freeze-slow
dead0=$(migrd_log host2 | grep -c 'nothing received')
bg host1 migrate $NS host2
check "the migration reaches its freeze" gx host1 \
	"for i in \$(seq 100); do grep -q '^1' $CG/cgroup.freeze && exit 0; sleep 0.1; done; exit 1"
sleep 1
timed_state host1
is "$ST" frozen "while the freeze hangs, migctl status answers (in $MS ms)"
check "at once, not after the freeze gave up" test "$MS" -lt 2500
check "migctl migrate ends" bg_wait host1 30
BG=$(bg_out host1)
diag "$BG"
is "$(sed -n 's/^rc=//p' <<<"$BG")" 16 "the move is rolled back (16)"
like "$BG" "did not freeze within 5000 ms" "saying the tasks did not freeze"
is "$(migrd_log host2 | grep -c 'nothing received')" "$dead0" "host2 never found host1 silent meanwhile"
untouched "freeze-slow"

# --- a check that takes long (src-check-slow: 15 s more): it runs in a
# process of its own, so migrd answers migctl and keeps its peer session
# meanwhile (a check of a few hundred sockets in its loop once left host2
# without a heartbeat for 4.4 s: "nothing received"), a second migrate of
# svc is busy, and cancel ends it with nothing changed
check "host1's checks will be slow" restart host1 src-check-slow
dead0=$(migrd_log host2 | grep -c 'nothing received')
bg host1 migrate $NS host2
sleep 1
timed_state host1
is "$ST" running "while the check runs, migctl status answers (in $MS ms) and shows the migration"
check "at once, not after the check" test "$MS" -lt 2500
is "$(mc host1 "migrate $NS host2 >/dev/null 2>&1; echo \$?")" 18 "a second migrate of svc meanwhile is busy (18)"
sleep 10
is "$(gx host1 "grep -c ^rc= /tmp/bg.out")" 0 "the check still runs 11 s on"
is "$(migrd_log host2 | grep -c 'nothing received')" "$dead0" "host2 never found host1 silent during it"
is "$(mc host1 "cancel $NS >/dev/null; echo \$?")" 0 "migctl cancel during the check exits 0"
check "migctl migrate ends" bg_wait host1 10
BG=$(bg_out host1)
diag "$BG"
is "$(sed -n 's/^rc=//p' <<<"$BG")" 15 "the move is refused, nothing changed (15)"
like "$BG" "cancel by the operator during the check" "saying so"
# 10 s without a report: migrd says it is still at work, so that
# migctl's 60 s wait for a report means a stuck migrd, not a long phase
like "$BG" "still +running, 1[0-9] s since" "a phase of over 10 s is reported still under way"
untouched "check-slow, cancelled"
# migctl check: its answer waits for the slow check, migctl status not
bg host1 check $NS host2
sleep 1
timed_state host1
check "migctl status answers during migctl check's slow check (in $MS ms)" test "$MS" -lt 2500
check "migctl check ends" bg_wait host1 20
BG=$(bg_out host1)
diag "$BG"
is "$(sed -n 's/^rc=//p' <<<"$BG")" 0 "migctl check exits 0 after it"
like "$BG" "host2 can take it" "with host2's word"
# a check whose process dies: refused, and why
check "host1's checks will die" restart host1 src-check-die
out=$(gx host1 "$MIGCTL migrate $NS host2 2>&1; echo rc=\$?")
diag "$out"
is "$(sed -n 's/^rc=//p' <<<"$out")" 15 "src-check-die: refused (15)"
like "$out" "ended before it answered" "saying the check did not answer"
untouched "check-die"
check "host1 restarted without faults" restart host1

# --- host1 dies while new connections are held back, before its freeze:
# the restarted migrd must lift the gate and touch nothing else (the
# tasks were never frozen, their sockets never paused)
check "host1 will die at the gate" restart host1 src-crash-gate
migrate host1 host2
if [ "${MRC:-0}" != 0 ]; then pass "migctl saw host1's migrd go (exit $MRC)"; else fail "migctl migrate exited 0 although migrd died"; fi
check "host1's migrd starts again" restart host1
for i in $(seq 100); do
	[ "$(gx host1 "$MIGCTL -j status | jq '.data.migrations | length'")" = 0 ] && break; sleep 0.2
done
like "$(gx host1 "$MIGCTL -j history | jq -r '.data.events[].event'" | tail -4)" "before its freeze" \
	"the restart knew the tasks were never frozen"
is "$(gx host1 "ip netns exec $NS nft list tables | grep -c migr_gate")" 0 "the gate is lifted"
untouched "crash at the gate"

# --- refused before anything: host2 already has a namespace called svc
mc host2 "ns create $NS --addr 10.77.0.181/24" >/dev/null
migrate host1 host2
is "$MRC" 15 "a name taken on host2: refused (15)"
like "$MOUT" "exists on host2" "and it says so"
mc host2 "ns delete $NS" >/dev/null
untouched "name taken"

# --- cancel while host2 holds back READY
check "host2 holds READY back" restart host2 dst-ready-hold
gx host1 "setsid sh -c '$MIGCTL migrate $NS host2 >/tmp/$NS.mig 2>&1; echo rc=\$? >>/tmp/$NS.mig' </dev/null >/dev/null 2>&1 &"
for i in $(seq 50); do
	[ "$(gx host1 "$MIGCTL -j status | jq -r '.data.migrations[0].state'")" = frozen ] && break; sleep 0.1
done
# frozen and locked, before COMMIT: host1 still answers for svc's
# addresses, so a kernel that asks again keeps its route (host2's asks:
# the client's probes must not lose their entry)
gx host1 "for i in \$(seq 50); do ip netns exec $NS nft list tables | grep -q 'arp migr_lock' && exit 0; sleep 0.1; done"
n=$(neigh_after_ask host2 $SVC4 $SVC6)
like "$n" "$SVC4 .*lladdr 52:54:00:77:01:80 REACHABLE" \
	"locked before COMMIT, host1 answers ARP for svc"
like "$n" "$SVC6 .*lladdr 52:54:00:77:01:80 REACHABLE" \
	"locked before COMMIT, host1 answers neighbour solicitations for svc"
out=$(mc host1 "cancel $NS; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "migctl cancel while frozen exits 0"
for i in $(seq 50); do gx host1 "grep -q ^rc= /tmp/$NS.mig" && break; sleep 0.1; done
mout=$(gx host1 "cat /tmp/$NS.mig")
diag "$mout"
is "$(sed -n 's/^rc=//p' <<<"$mout")" 16 "the migrate command ends rolled back (16)"
like "$mout" "cancel by the operator" "because of the cancel"
untouched "cancel"
out=$(mc host1 "cancel $NS; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 7 "cancel with no migration under way: 7"

# --- in doubt: host2 dies on COMMIT; when it comes back it answers
# "aborted" to the repeated COMMIT and host1 rolls back by itself
check "host2 will die on COMMIT" restart host2 dst-crash-commit
migrate host1 host2
diag "$MOUT"
is "$MRC" 17 "host2 died after COMMIT: migctl migrate exits 17 (in doubt)"
st=$(gx host1 "$MIGCTL -j status | jq -c '.data.migrations[0] | {state, role, peer}'")
is "$st" '{"state":"in-doubt","role":"source","peer":"host2"}' "migctl status on host1 shows it in doubt"
like "$(mc host1 status)" "in doubt with host2" "and says so in words"
is "$(gx host1 "grep frozen $CG/cgroup.events")" "frozen 1" "host1 keeps svc frozen while in doubt"
# after COMMIT host1 says nothing for svc: host2 may have announced it
# (host2's kernel asks, its svc locked and detached: the client's entry
# is left alone, or its probes would fail "No route to host" until one
# of the hosts answers)
n=$(neigh_after_ask host2 $SVC4 $SVC6)
diag "$n"
is "$(grep -c lladdr <<<"$n")" 0 \
	"in doubt after COMMIT, host1 answers neither ARP nor neighbour solicitations for svc"
out=$(mc host1 "ns delete $NS; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 18 "ns delete is refused while in doubt (18)"
check "host2's migrd starts again" restart host2
for i in $(seq 100); do
	[ "$(gx host1 "$MIGCTL -j status | jq '.data.migrations | length'")" = 0 ] && break; sleep 0.2
done
like "$(gx host1 "$MIGCTL -j history | jq -r '.data.events[].event'" | tail -3)" "rolled back" \
	"host2 answered the repeated COMMIT with aborted: host1 rolled back"
untouched "in doubt, then healed"

# --- in doubt again, ended by the operator
check "host2 will die on COMMIT again" restart host2 dst-crash-commit
migrate host1 host2
is "$MRC" 17 "in doubt again"
out=$(mc host1 "resolve $NS rollback; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "migctl resolve svc rollback exits 0"
check "host2's migrd starts again (and cleans up)" restart host2
untouched "resolved by the operator"

# --- in doubt with host2 up and silent: host2 would know, so resolve
# is refused unless forced
check "host2 will hear COMMIT and say nothing" restart host2 dst-commit-hold
migrate host1 host2
is "$MRC" 17 "in doubt with host2 up"
out=$(mc host1 "resolve $NS rollback 2>&1; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 18 "resolve while host2 is up: refused (18)"
like "$out" "host2 is up: it will answer the COMMIT" "saying why"
is "$(gx host1 "grep frozen $CG/cgroup.events")" "frozen 1" "svc still frozen, in doubt"
out=$(mc host1 "resolve $NS rollback force; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "resolve svc rollback force exits 0"
check "host2's migrd starts again (and cleans up)" restart host2
untouched "forced resolve"

# --- host1 dies right after it wrote "moved", before it killed its
# frozen copy: the restarted migrd finishes the job (a frozen svc must
# not stay on host1 with its addresses on the LAN)
check "host1 will die once moved" restart host1 src-crash-done
migrate host1 host2
if [ "${MRC:-0}" != 0 ]; then pass "migctl saw host1's migrd go (exit $MRC)"; else fail "migctl migrate exited 0 although migrd died"; fi
is "$(svc_where)" "host1 host2" "until host1's migrd returns, its frozen copy is there (svc live on host2)"
check "host1's migrd starts again" restart host1
for i in $(seq 50); do
	[ "$(svc_where)" = host2 ] && break; sleep 0.2
done
is "$(svc_where)" host2 "the restart killed and deleted host1's copy: svc on host2 only"
like "$(gx host1 "$MIGCTL -j history | jq -r '.data.events[].event'" | tail -3)" "found moved to host2 after a restart" \
	"the history says so"
is "$(gx host1 "ip link show v$NS 2>&1 | grep -c 'does not exist'")" 1 "host1's veth of svc is gone too"
# host1 died before its FORGET: host2 kept the id, told host1 again when
# the channel came back, and host1 (not in doubt) answered FORGET
for i in $(seq 50); do
	[ "$(gx host2 "jq '.committed | length' /var/lib/migrd/migrations.json")" = 0 ] && break; sleep 0.2
done
is "$(gx host2 "jq '.committed | length' /var/lib/migrd/migrations.json")" 0 \
	"host2's committed list is empty again: reconciled on reconnect"

# --- going live that takes long (dst-live-slow: one socket out of repair
# at a time, spread over 2.5 s; ten thousand sockets take as long): host1
# takes them out of repair in slices of its loop, so it answers migctl
# and keeps its heartbeats meanwhile, and holds COMMITTED until the last;
# host2, whose commit-timeout is 1 s, asks again while host1 is up and
# waits, rather than call the move in doubt (it once did, at 10,000
# sockets, with migrd's loop held for 5.6 s)
check "host1 will go live slowly" restart host1 dst-live-slow
dead0=$( (migrd_log host1; migrd_log host2) | grep -c 'nothing received')
bg host2 migrate $NS host1
check "host1 starts going live" gx -t 60 host1 "for i in \$(seq 400); do
	[ \"\$($MIGCTL -j status | jq -r '.data.migrations[0].state // empty')\" = live ] && exit 0; sleep 0.05; done; exit 1"
timed_state host1
is "$ST" live "while its sockets leave repair, host1 answers migctl status (in $MS ms)"
check "at once (going live does not hold host1's loop)" test "$MS" -lt 1500
timed_state host2
# (on a slow host the move may be over by the time host2 is asked: no
# migration left, "" then; what matters is that it is never in doubt,
# and the checks below show how it ended)
like "$ST" "^(committing)?$" "host2 waits, committing, not in doubt (or it is over: '$ST')"
check "migctl migrate ends" bg_wait host2 30
BG=$(bg_out host2)
diag "$BG"
is "$(sed -n 's/^rc=//p' <<<"$BG")" 0 "the move succeeds (0) although going live outlasted host2's commit-timeout"
like "$(migrd_log host2 | grep -c 'commit-wait: committing -> committing')" '^[1-9]' "host2 asked again while it waited"
like "$(migrd_log host1 | grep -o 'live, [0-9]* sockets out of repair in [0-9]*' | tail -1)" \
	'out of repair in [0-9]{4}' "host1 took seconds to go live"
is "$( (migrd_log host1; migrd_log host2) | grep -c 'nothing received')" "$dead0" "neither host found the other silent"
is "$(svc_where)" host1 "svc on host1 only"
check "host1 restarted without faults" restart host1

# --- tasks slow to die after the commit (src-kill-slow: their cgroup
# seems populated for 3 s more, as a large address space being freed or
# a task in an uninterruptible sleep would make it): host1 asks for the
# kill and waits for it from its loop, so it answers migctl meanwhile;
# migctl migrate answers once the tasks are gone and svc is deleted on
# host1, so that svc's name is free there for a move back
check "host1's killed tasks will seem slow to die" restart host1 src-kill-slow
bg host1 migrate $NS host2
check "host1 reaches moved, its tasks dying" gx -t 60 host1 "for i in \$(seq 400); do
	[ \"\$($MIGCTL -j status | jq -r '.data.migrations[0].state // empty')\" = moved ] && exit 0; sleep 0.05; done; exit 1"
timed_state host1
is "$ST" moved "while its tasks die, host1 answers migctl status (in $MS ms)"
check "at once (the kill does not hold host1's loop)" test "$MS" -lt 1500
is "$(bg_out host1 | grep -c '^rc=')" 0 "migctl migrate has not answered yet"
check "migctl migrate ends" bg_wait host1 30
BG=$(bg_out host1)
diag "$BG"
is "$(sed -n 's/^rc=//p' <<<"$BG")" 0 "the move succeeds (0)"
like "$(migrd_log host1 | grep -o "the tasks of $NS died in [0-9]*" | tail -1)" 'died in [0-9]{4}' \
	"host1 waited seconds for its tasks, from its loop"
is "$(gx host1 "ip netns list | grep -cw $NS")" 0 "svc is deleted on host1 when migctl answers"
is "$(svc_where)" host2 "svc on host2 only"
check "host1 restarted without faults" restart host1

# --- a bridge port slow to forward going live (dst-attach-slow: 1.5 s,
# as STP's listening and learning hold a new port): host1 polls the port
# from its loop, so it answers migctl meanwhile and neither host finds
# the other silent; then the move ends as any other
check "host1's bridge port will seem slow to forward" restart host1 dst-attach-slow
dead0=$( (migrd_log host2; migrd_log host1) | grep -c 'nothing received')
# a wait that held the loop for the port's 1.5 s would make the loop's
# own watch log "event loop held" (over 1 s late, loopwatch.c); the
# status round trip itself depends on how busy the TCG guest is
held="event loop held"
held0=$(migrd_log host1 | grep -c "$held")
bg host2 migrate $NS host1
check "host1 starts going live" gx -t 60 host1 "for i in \$(seq 400); do
	[ \"\$($MIGCTL -j status | jq -r '.data.migrations[0].state // empty')\" = live ] && exit 0; sleep 0.05; done; exit 1"
t0=$(date +%s%N)
ST=$(gx host1 "$MIGCTL -j status | jq -r '.data.migrations[0].state // empty'")
MS=$((($(date +%s%N) - t0) / 1000000))
is "$ST" live "while its port waits, host1 answers migctl status (in $MS ms)"
check "migctl migrate ends" bg_wait host2 30
BG=$(bg_out host2)
diag "$BG"
is "$(sed -n 's/^rc=//p' <<<"$BG")" 0 "the move succeeds (0)"
like "$(migrd_log host1 | grep -o "the port of $NS forwarded on [^ ]* after [0-9]*" | tail -1)" \
	'after (1[5-9][0-9]{2}|[2-9][0-9]{3})$' "host1 waited 1.5 s or more for its port, from its loop"
is "$(migrd_log host1 | grep -c "$held")" "$held0" "host1's loop was never held while its port waited"
is "$( (migrd_log host2; migrd_log host1) | grep -c 'nothing received')" "$dead0" "neither host found the other silent"
is "$(svc_where)" host1 "svc on host1 only"
check "host1 restarted without faults" restart host1

# --- the client lived through all of it; the service never sent FIN/RST
sleep 2
gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done"
r=$(gx client "cat /tmp/$NS.report")
check_client "$r" "through every failure"
finrst=$(capture_stop)
is "$(grep -c . <<<"$finrst")" 0 "no FIN or RST from the service's busy port"
[ -z "$finrst" ] || diag "$finrst"
done_testing
