#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Ordinary traffic that is not friendly: three moves (host1 -> host2 ->
# host1 -> host2) while
#  - full: 8 connections (IPv4, IPv6) where neither side reads for a
#    minute and a half, longer than any timeout of migrd, while both write
#    200 kB/s into 1 MiB buffers: queues full both ways (more than 1 MiB
#    each way per connection), unsent bytes behind a closed window;
#  - slow: 4 connections the client reads at 20 kB/s while the service
#    writes 40 kB/s into small buffers (zero windows, window probes),
#    two half-closed by the client early (the service writes on into
#    the slow reader for 20 s after it took them, then closes: an
#    orphan draining its backlog, which a move may have to wait for),
#    two the service half-closes (its FIN queued behind the backlog);
#  - busy: 6 ordinary connections beside them (busy, half-closed either
#    way), whose longest stall must stay within the downtime plus a
#    retransmission;
#  - an orphan: a 1 MiB reply the service wrote and closed, read at
#    300 kB/s, alive when a move starts: the move waits for it.
# Every move must exit 0; every byte each way must arrive exactly once,
# in order, with no reset; no RST from the service on the LAN.  orphan-wait is 20 s, so
# an orphan a slow move meets is waited for, not refused; migrate-timeout
# is 120 s, as the records of a move take up to tens of seconds here.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
trap mig_teardown EXIT

T0=$(gx client 'date +%s')
# both ends stop reading between these: long enough for all three moves
# to start within it even when a loaded host makes each take 20 s
PA=$((T0 + 8)) PB=$((T0 + 100))
PAUSE="pause=$PA:$PB"
SERVE="$W/streamd -r 40000 \
	-l [::]:7404,rate=200000,$PAUSE,buf=1048576 \
	-l [::]:7402,linger=20,buf=65536 -l [::]:7403,shut=6,buf=65536 \
	-l [::]:7400,rate=20000 -l [::]:7408,rate=20000,linger=2 -l [::]:7409,rate=20000,shut=8 \
	-l [::]:7405,reply=1048576,buf=1048576"
# streamc NAME ARGS: a client instance, report in /tmp/svc.NAME
streamc() {
	local n=$1; shift
	gx client "rm -f /tmp/$NS.$n; setsid $W/streamc $* -o /tmp/$NS.$n \
		</dev/null >/tmp/$NS.$n.log 2>&1 &"
}
# report NAME: wait for that instance to end, print its report
report() {
	# anchored: the shell running this loop has the pattern in its own
	# command line
	gx -t 180 client "while pgrep -f '^$W/streamc .*/tmp/$NS.$1\$' >/dev/null; do sleep 0.5; done; cat /tmp/$NS.$1"
}
# verified NAME WHAT: the client instance's verdict
verified() {
	local r
	r=$(report "$1")
	diag "$1: $r"
	is "$(kv "$r" verdict)" PASS "$2: every byte verified, every close as planned"
	is "$(kv "$r" resets)" 0 "$2: no reset"
	is "$(kv "$r" mismatches)" 0 "$2: no byte lost, duplicated, reordered or changed"
	[ "$(kv "$r" verdict)" = PASS ] || diag "$(gx client "tail -20 /tmp/$NS.$1.log")"
	R=$r
}
# move FROM TO N: a move, with its checks
move() {
	migrate "$1" "$2"
	diag "$MOUT"
	is "$MRC" 0 "move $3 ($1 -> $2) exits 0"
	is "$(svc_where)" "$2" "after move $3 svc runs on $2 only"
	diag "move $3: $(jq -c '{sockets: .sockets, bytes: .bytes, ms: .ms}' <<<"$MREP")"
	DOWN="$DOWN $(rep .ms.downtime)"
}

# migrate-timeout 120 s: tens of MiB of records stream at 1 to 3 MB/s
# between two TCG guests, slower still on a loaded host
check "migrd on host1 and host2, peered" mig_setup "commit-timeout 1000" "orphan-wait 20000" "migrate-timeout 120"
check "svc created on host1" mc host1 "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80"
check "streamd serves in svc" mc host1 "run $NS -- $SERVE"
check "streamd listens" gx host1 "for i in \$(seq 100); do ip netns exec $NS ss -Htln sport = :7405 | grep -q . && exit 0; sleep 0.1; done; exit 1"
# RSTs from the service (the client's own probes may reset theirs)
gx client "setsid tcpdump -i br0 -n -l '(src host $SVC4 and tcp[tcpflags] & tcp-rst != 0) or (src host $SVC6 and ip6[6] = 6 and ip6[53] & 4 != 0)' \
	</dev/null >/tmp/$NS.rst 2>/dev/null &"
sleep 1
streamc full -c $SVC4:7404,$PAUSE,buf=1048576 -c "'[$SVC6]:7404,$PAUSE,buf=1048576'" -n 8 -r 200000 -d 140
streamc busy -c $SVC4:7400 -c "'[$SVC6]:7408,halfclose=8'" -c $SVC4:7409,peershut -n 6 -r 20000 -d 110 -p 1000
streamc slow -c $SVC4:7402,halfclose=5,readrate=20000,buf=32768 \
	-c "'[$SVC6]:7403,peershut,readrate=20000,buf=32768'" -n 4 -r 40000 -d 120 -p 1000
w=$((PA + 12 - $(gx client 'date +%s')))
[ "$w" -gt 0 ] && sleep "$w"
gx host1 "ip netns exec $NS ss -tnOH state established" | awk '{ r += $1; s += $2 } END { printf "# queued in svc: recv %d send %d\n", r, s }' >&2

DOWN=""
move host1 host2 1
sleep 2
streamc orphan -c $SVC4:7405,reply,readrate=300000,buf=65536 -n 1 -d 30
check "the service closed: an orphan owes the client its reply" \
	gx host2 "for i in \$(seq 50); do ip netns exec $NS ss -tnH state fin-wait-1 state closing state last-ack sport = :7405 | grep -q . && exit 0; sleep 0.1; done; exit 1"
move host2 host1 2
like "$MOUT" "orphans .*delivered their last bytes" "move 2 waited for the orphan"
q=$(rep .bytes.queued)
if [ "${q:-0}" -ge $((8 * 1048576)) ]; then pass "move 2 carried $q queued bytes (full queues)"; else fail "move 2 carried ${q:-0} queued bytes, expected at least 8 MiB (1 MiB a connection)"; fi
verified orphan "the orphan's 1 MiB reply"
is "$(kv "$R" rx_bytes)" 1048576 "the orphan's client read the whole reply"
sleep 3
move host1 host2 3
q=$(rep .bytes.queued)
if [ "${q:-0}" -ge $((8 * 1048576)) ]; then pass "move 3 carried $q queued bytes"; else fail "move 3 carried ${q:-0} queued bytes, expected at least 8 MiB (1 MiB a connection)"; fi
maxdown=$(tr ' ' '\n' <<<"$DOWN" | sort -g | tail -1)

verified full "full queues both ways"
verified slow "slow readers, half-closes"
verified busy "busy connections beside them"
stall=$(kv "$R" longest_stall_ms)
diag "downtimes (ms):$DOWN; longest stall of a busy connection: $stall ms"
# a retransmission: the peer's RTO after a loss, at most 1 s here, doubled
# once while the lock held (the restored side's probe ends the wait)
if [ "${stall%.*}" -le $(( ${maxdown%.*} + 3000 )) ] 2>/dev/null; then
	pass "busy connections stalled at most the downtime plus a retransmission ($stall ms)"
else
	fail "a busy connection stalled $stall ms; the longest downtime was $maxdown ms"
fi
rst=$(gx client "pkill -f 'tcpdump -i br0'; sleep 0.3; cat /tmp/$NS.rst")
is "$(grep -c . <<<"$rst")" 0 "no RST from the service on the LAN"
[ -z "$rst" ] || diag "$rst"
done_testing
