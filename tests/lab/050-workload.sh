#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The test workload itself: streamd in a namespace on host1 serves
# streamc on the client; every byte both ways is checked against the
# sequence-keyed pattern.  Then the checker is shown to catch what it
# must: a byte changed on the wire, and a service that dies.
. "$(dirname "$0")/../lib.sh"

W=$B/tests/workload
cleanup() { service_ns_del host1 wl; }
trap cleanup EXIT
cleanup

check "namespace wl on host1" service_ns host1 wl 10.77.0.150/24 fd00:77::150/64 52:54:00:77:01:50
start_streamd() {
	gx host1 "ip netns exec wl setsid $W/streamd -l '[::]:7100' -r 20000 -s /tmp/wl.stats </dev/null >/tmp/wl.log 2>&1 &
		for i in \$(seq 50); do ip netns exec wl ss -Htln sport = :7100 | grep -q . && exit 0; sleep 0.1; done; exit 1"
	gx host1 "ip netns exec wl setsid $W/streamd -r 20000 -l '[::]:7101,rate=0' -l '[::]:7102,linger=1' -l '[::]:7103,shut=2' </dev/null >/tmp/wl2.log 2>&1 &
		for i in \$(seq 50); do ip netns exec wl ss -Htln sport = :7103 | grep -q . && exit 0; sleep 0.1; done; exit 1"
}
check "streamd listens in wl" start_streamd

# 1. clean run: 20 connections, IPv4 and IPv6, 20 kB/s each way, probes
r=$(gx -t 60 client "$W/streamc -c 10.77.0.150:7100 -c '[fd00:77::150]:7100' -n 20 -r 20000 -d 5 -p 500")
diag "$r"
is "$(kv "$r" verdict)" PASS "20 flows for 5 s: every byte verified both ways"
is "$(kv "$r" flows)" 20 "all 20 flows stayed open"
rx=$(kv "$r" rx_bytes)
if [ "${rx:-0}" -ge 1000000 ]; then pass "client verified $rx bytes (>= 1 MB)"; else fail "client verified only ${rx:-0} bytes"; fi
like "$(kv "$r" probes_ok)" '^[0-9]+$' "probes were served"
is "$(kv "$r" probes_failed)" 0 "no probe failed"
gx host1 'ip netns pids wl | xargs -r kill -USR1; sleep 0.5'
s=$(gx host1 cat /tmp/wl.stats)
diag "streamd: $s"
is "$(kv "$s" mismatches)" 0 "streamd verified what the client sent"
srx=$(kv "$s" rx_bytes)
if [ "${srx:-0}" -ge 1000000 ]; then pass "streamd verified $srx bytes"; else fail "streamd verified only ${srx:-0} bytes"; fi

# 1b. the connection modes: idle, client half-close, service half-close
r=$(gx -t 60 client "$W/streamc -c 10.77.0.150:7101,idle -c '[fd00:77::150]:7102,halfclose=1' -c 10.77.0.150:7103,peershut -n 6 -r 20000 -d 6")
diag "$r"
is "$(kv "$r" verdict)" PASS "idle, half-closing and half-closed flows all behave"
is "$(kv "$r" closes_ok)" 4 "both client half-closes and both service half-closes completed"
is "$(kv "$r" flows)" 2 "the two idle flows are still open"

# 2. a payload byte changed on the wire (nft mangles three segments the
#    service sends): the client must see the mismatch.
check "nft rule that rewrites one payload byte of 3 segments" gx host1 "ip netns exec wl nft -f - <<'NFT'
table inet mangle {
	chain out {
		type filter hook output priority 0;
		tcp sport 7100 meta length > 400 limit rate 1/hour burst 3 packets @th,320,8 set 0x5a
	}
}
NFT"
r=$(gx -t 60 client "$W/streamc -c 10.77.0.150:7100 -n 4 -r 20000 -d 4")
diag "$r"
is "$(kv "$r" verdict)" FAIL "the client fails the run"
if [ "$(kv "$r" mismatches)" -ge 1 ]; then pass "and names the mismatch"; else fail "no mismatch counted"; fi
gx host1 "ip netns exec wl nft delete table inet mangle"

# 3. the service dies mid-run: the client must count the broken flows.
r=$(gx -t 60 client "$W/streamc -c '[fd00:77::150]:7100' -n 4 -r 20000 -d 6 -o /tmp/wl.report & sleep 3; ip netns exec wl true 2>/dev/null; wait; cat /tmp/wl.report" &
	sleep 3.5; gx host1 "ip netns pids wl | xargs -r kill -9"; wait)
diag "$r"
is "$(kv "$r" verdict)" FAIL "a killed service fails the run"
broken=$(( $(kv "$r" resets) + $(kv "$r" eofs) ))
is "$broken" 4 "all 4 flows counted as reset or closed"
done_testing
