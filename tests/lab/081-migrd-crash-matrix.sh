#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The crash matrix (issue 12): migrd dies (it exits at once, as if
# killed: no cleanup, no last word to its peer) at each phase of a move,
# on either host, while a client keeps 12 verified connections busy.  It
# is started again; both sides settle by themselves; then the namespace
# must be live on exactly one host, thawed and unlocked there, with
# nothing of it left on the other and no migration on either, and the
# client must see no reset and no wrong byte through all of it.
#
#   src-crash-dump     host1, frozen, half of the sockets sent
#   src-crash-commit   host1, "committing" written, COMMIT not sent
#   dst-crash-restore  host2, restoring the second socket
#   dst-crash-precommit host2, COMMIT taken in ready, before the commit
#                      point is written
#
# and the link between the two hosts is cut (every segment of the peer
# channel dropped on arrival, both ways: silence, no reset) at either
# side of the commit point, then mended:
#
#   COMMIT lost        host1 wrote "committing"; its COMMIT and every
#                      repeat go into the cut.  host1 is in doubt, host2
#                      gives up waiting and discards; when the link is
#                      back host1 asks again, hears ABORTED, rolls back.
#   COMMITTED lost     host2 took COMMIT in and goes live behind the cut;
#                      host1 is in doubt, svc frozen there; when the link
#                      is back host2 says COMMITTED again, host1 finishes.
#
# and the state folder of either host is full (a tmpfs of 256 KiB, filled
# to the last byte while migrd runs): the move is refused before the
# freeze, by name (host1: "No space left on device" writing "frozen";
# host2: its state folder full, found by the PREPARE's checks), svc
# stays on host1, and once space is freed the next move succeeds.
#
# (074 has the other cells: host1 at the gate and once moved, host2
# after the commit point, a failed write at each vital step.)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT
TIMEOUT=4
check "migrd on host1 and host2, peered" mig_setup "commit-timeout 1000" "migrate-timeout $TIMEOUT"
check "svc serving on host1" svc_start host1 20000 600
gx client "rm -f /tmp/$NS.report; setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' -c $SVC4:7401,idle \
	-n 12 -r 20000 -d 0 -p 500 -o /tmp/$NS.report </dev/null >/tmp/$NS.client 2>&1 &"
capture_start
sleep 4

# crash_cell GUEST FAULT: a move host1 -> host2 during which GUEST's
# migrd dies at FAULT, then the checks above; svc is brought back to
# host1 for the next cell if it ended on host2.
crash_cell() {
	local g=$1 f=$2 where other
	check "$f: migrd on $g will die there" restart "$g" "$f"
	migrate host1 host2
	diag "$f: migctl migrate exited $MRC"
	check "$f: it did die" gx "$g" "for i in \$(seq 50); do pgrep -x migrd >/dev/null || exit 0; sleep 0.1; done; exit 1"
	check "$f: $g's migrd starts again, without the fault" restart "$g"
	check "$f: both hosts settle, no migration left" settled
	where=$(svc_where)
	diag "$f: host1: $(gx host1 "$MIGCTL -j history | jq -r '.data.events[-3:][].event'")"
	diag "$f: host2: $(gx host2 "$MIGCTL -j history | jq -r '.data.events[-3:][].event'")"
	like "$where" '^host[12]$' "$f: svc is live on exactly one host ($where)"
	[ "$where" = host2 ] && other=host1 || other=host2
	if [ -n "$where" ]; then
		is "$(gx "$where" "grep frozen $CG/cgroup.events; ip netns exec $NS nft list tables | grep -c migr_")" \
			"frozen 0
0" "$f: thawed and unlocked on $where"
	fi
	is "$(gx "$other" "ls /run/netns; ip -br link show v$NS 2>/dev/null")" "" \
		"$f: nothing of svc left on $other"
	if [ "$where" = host2 ]; then
		migrate host2 host1
		is "$MRC" 0 "$f: (svc moved back to host1 for the next cell)"
	fi
}

crash_cell host1 src-crash-dump
crash_cell host1 src-crash-commit
crash_cell host2 dst-crash-restore
crash_cell host2 dst-crash-precommit

# cut / mend: the peer channel's segments dropped on arrival at both
# hosts (the service's own traffic is in its namespace, untouched)
cut() {
	local g
	for g in host1 host2; do
		gx "$g" "nft add table inet labcut && nft add chain inet labcut in '{ type filter hook input priority -50; }' &&
			nft add rule inet labcut in tcp dport 7780 drop && nft add rule inet labcut in tcp sport 7780 drop" || return 1
	done
}
mend() { gx host1 "nft delete table inet labcut"; gx host2 "nft delete table inet labcut"; }

# partition_cell GUEST FAULT WHAT WHERE: a move host1 -> host2, the link
# cut while GUEST's migrd holds the step FAULT names for 3 s; migctl
# migrate must end in doubt (17) with svc frozen on host1; once host2
# has settled alone, the link is mended and both settle on WHERE.
partition_cell() {
	local g=$1 f=$2 what=$3 want=$4 n0 i other st
	check "$what: migrd on $g will pause at $f" restart "$g" "$f"
	n0=$(migrd_log "$g" | grep -c "fault injected: $f")
	gx host1 "rm -f /tmp/$NS.mig; setsid sh -c '$MIGCTL migrate $NS host2 >/tmp/$NS.mig 2>&1; echo rc=\$? >>/tmp/$NS.mig' </dev/null >/dev/null 2>&1 &"
	for i in $(seq 300); do
		[ "$(migrd_log "$g" | grep -c "fault injected: $f")" -gt "$n0" ] && break; sleep 0.1
	done
	check "$what: the link is cut while $g holds that step" cut
	for i in $(seq 150); do gx host1 "grep -q ^rc= /tmp/$NS.mig" && break; sleep 0.2; done
	MOUT=$(gx host1 "cat /tmp/$NS.mig")
	diag "$MOUT"
	is "$(sed -n 's/^rc=//p' <<<"$MOUT")" 17 "$what: migctl migrate exits 17 (in doubt)"
	is "$(gx host1 "grep frozen $CG/cgroup.events")" "frozen 1" "$what: host1 keeps svc frozen while in doubt"
	if [ "$want" = host2 ]; then
		# host2 went live behind the cut: svc serves there already
		for i in $(seq 100); do
			[ "$(gx host2 "$MIGCTL -j status | jq '.data.migrations | length'")" = 0 ] && break; sleep 0.2
		done
		is "$(gx host2 "grep frozen $CG/cgroup.events; ip netns exec $NS nft list tables | grep -c migr_")" \
			"frozen 0
0" "$what: behind the cut, svc is live on host2"
	else
		# host2 never heard COMMIT: it waits its timeout and discards
		for i in $(seq 100); do
			gx host2 "[ ! -e /run/netns/$NS ]" && break; sleep 0.2
		done
		is "$(gx host2 "ls /run/netns; $MIGCTL -j status | jq '.data.migrations | length'")" 0 \
			"$what: behind the cut, host2 discarded what it built"
	fi
	st=$(gx host1 "$MIGCTL -j status | jq -r '.data.migrations[0].state'")
	is "$st" in-doubt "$what: host1 is still in doubt"
	check "$what: the link is mended" mend
	for i in $(seq 300); do
		[ "$(svc_where)" = "$want" ] && settled && break; sleep 0.2
	done
	diag "$what: host1: $(gx host1 "$MIGCTL -j history | jq -r '.data.events[-3:][].event'")"
	is "$(svc_where)" "$want" "$what: once mended, svc is live on $want only"
	[ "$want" = host2 ] && other=host1 || other=host2
	is "$(gx "$want" "grep frozen $CG/cgroup.events; ip netns exec $NS nft list tables | grep -c migr_")" \
		"frozen 0
0" "$what: thawed and unlocked on $want"
	is "$(gx "$other" "ls /run/netns; ip -br link show v$NS 2>/dev/null")" "" \
		"$what: nothing of svc left on $other"
	check "$what: $g's migrd without the fault" restart "$g"
	if [ "$want" = host2 ]; then
		migrate host2 host1
		is "$MRC" 0 "$what: (svc moved back to host1)"
	fi
}

partition_cell host1 src-commit-pause "COMMIT lost" host1
partition_cell host2 dst-commit-pause "COMMITTED lost" host2

# full_cell GUEST: GUEST's state folder on a tiny tmpfs, filled up while
# its migrd runs; a move fails and changes nothing; freed, one succeeds
SD=/var/lib/migrd
full_cell() {
	local g=$1 what="$1's state folder full" rc n
	migrd_stop "$g"
	check "$what: a tmpfs of 256 KiB holds it" gx "$g" "rm -rf /tmp/sd.keep && cp -a $SD /tmp/sd.keep &&
		mount -t tmpfs -o size=256k,mode=0700 migr-full $SD && cp -a /tmp/sd.keep/. $SD/"
	check "$what: migrd runs on it" restart "$g"
	check "$what: filled to the last byte" gx "$g" "dd if=/dev/zero of=$SD/fill bs=4k 2>/dev/null; dd if=/dev/zero of=$SD/fill2 bs=1 2>/dev/null; [ \$(df -k --output=avail $SD | tail -1) = 0 ]"
	migrate host1 host2
	diag "$MOUT"
	rc=$MRC
	is "$rc" 15 "$what: the move is refused before the freeze (15)"
	like "$MOUT" "No space left on device|state folder .* is full" "$what: and says why"
	for n in $(seq 50); do
		gx host2 "[ ! -e /run/netns/$NS ]" && [ "$(svc_where)" = host1 ] && break; sleep 0.2
	done
	is "$(svc_where)" host1 "$what: svc runs on host1 only"
	is "$(gx host1 "grep frozen $CG/cgroup.events; ip netns exec $NS nft list tables | grep -c migr_")" \
		"frozen 0
0" "$what: thawed and unlocked on host1"
	is "$(gx "$g" "ls -A $SD | grep -c tmp")" 0 "$what: no half-written file left"
	check "$what: space freed" gx "$g" "rm -f $SD/fill $SD/fill2"
	migrate host1 host2
	is "$MRC" 0 "$what: then the move succeeds"
	migrate host2 host1
	is "$MRC" 0 "$what: and back"
	migrd_stop "$g"
	check "$what: the state folder back on its disk" gx "$g" "rm -rf /tmp/sd.keep && cp -a $SD /tmp/sd.keep &&
		umount $SD && rm -rf $SD/* && cp -a /tmp/sd.keep/. $SD/"
	check "$what: migrd on it again" restart "$g"
}
full_cell host1
full_cell host2

# --- the client lived through all of it; the service never sent FIN/RST
sleep 2
gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done"
r=$(gx client "cat /tmp/$NS.report")
check_client "$r" "through every crash"
finrst=$(capture_stop)
is "$(grep -c . <<<"$finrst")" 0 "no FIN or RST from the service's busy port"
[ -z "$finrst" ] || diag "$finrst"
done_testing
