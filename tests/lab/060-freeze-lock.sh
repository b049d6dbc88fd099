#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The freeze-window mechanics on their own (libmigr through nsmech):
# the cgroup freezer stops a live service, the nftables lock cuts its
# traffic, sockets are collected once each with every (pid, fd) holding
# them, the thawed service carries on with every byte intact, the move is
# announced on the wire, and cgroup.kill empties the cgroup.
. "$(dirname "$0")/../lib.sh"

W=$B/tests/workload
M=$B/tests/tools/nsmech
CG=/sys/fs/cgroup/fztest
cleanup() {
	gx host1 "echo 1 > $CG/cgroup.kill; sleep 0.3; rmdir $CG" >/dev/null 2>&1
	service_ns_del host1 fz
}
trap cleanup EXIT
cleanup

check "namespace fz on host1" service_ns host1 fz 10.77.0.160/24 fd00:77::160/64 52:54:00:77:01:60
check "streamd and a socket-sharing pair run in cgroup fztest" gx host1 "set -e
	mkdir $CG
	setsid sh -c 'echo \$\$ > $CG/cgroup.procs; exec ip netns exec fz $W/streamd -l [::]:7200 -r 20000' </dev/null >/tmp/fz.log 2>&1 &
	for i in \$(seq 50); do ip netns exec fz ss -Htln sport = :7200 | grep -q . && break; sleep 0.1; done
	setsid sh -c 'echo \$\$ > $CG/cgroup.procs; exec ip netns exec fz bash -c \"exec 5<>/dev/tcp/10.77.0.160/7200; sleep 600 & wait\"' </dev/null >/dev/null 2>&1 &
	sleep 1"

# --- collect
check "freeze the cgroup" gx host1 "$M freeze $CG"
is "$(gx host1 "grep frozen $CG/cgroup.events")" "frozen 1" "cgroup.events says frozen 1"
out=$(gx host1 "$M collect $CG")
diag "$out"
like "$out" "^tasks=[0-9]+ sockets=3$" "three sockets: listener, accepted end, connecting end"
is "$(grep -c 'family=inet6 type=stream' <<<"$out")" 2 "streamd's two sockets are inet6"
shared=$(grep 'family=inet ' <<<"$out" | sed 's/.*users=//')
like "$shared" "^[0-9]+:5,[0-9]+:5$" "the shared socket is listed once, with both tasks at fd 5"
check "thaw" gx host1 "$M thaw $CG"
is "$(gx host1 "grep frozen $CG/cgroup.events")" "frozen 0" "cgroup.events says frozen 0"

# --- freeze + lock under live traffic
gx client "rm -f /tmp/fz.report; setsid $W/streamc -c 10.77.0.160:7200 -c '[fd00:77::160]:7200' -n 10 -r 20000 -d 14 -o /tmp/fz.report </dev/null >/tmp/fz.client 2>&1 &"
sleep 2.5
check "freeze and lock the live service (a source's lock)" gx host1 "$M freeze $CG && $M lock-source fz"
is "$(gx host1 "$M locked fz")" yes "the lock table is there"
is "$(gx host1 "ip netns exec fz nft list tables | sort")" "table arp migr_lock
table inet migr_lock" "the lock holds IP (inet) and ARP (arp)"
if gx client "ping -c1 -W1 10.77.0.160" >/dev/null 2>&1; then
	fail "the locked namespace does not answer ping"
else
	pass "the locked namespace does not answer ping"
fi
# a source still owns its addresses: the client's kernel, made to ask
# again, learns the MAC from ARP and from neighbour discovery (a long
# freeze outlasts neighbour entries: connect() would fail "No route to
# host" instead of waiting)
n=$(neigh_after_ask client 10.77.0.160 fd00:77::160)
diag "$n"
like "$n" "10.77.0.160 .*lladdr 52:54:00:77:01:60 REACHABLE" \
	"the locked source answers an ARP request for its address"
like "$n" "fd00:77::160 .*lladdr 52:54:00:77:01:60 REACHABLE" \
	"the locked source answers a neighbour solicitation for its address"
check "mute the lock (what a source does before COMMIT)" gx host1 "$M mute fz"
n=$(neigh_after_ask client 10.77.0.160 fd00:77::160)
diag "$n"
is "$(grep -c lladdr <<<"$n")" 0 \
	"muted, the source answers neither ARP nor neighbour solicitations"
sleep 0.5
check "unlock and thaw" gx host1 "$M unlock fz && $M thaw $CG"
is "$(gx host1 "$M locked fz")" no "the lock table is gone"
is "$(gx host1 "ip netns exec fz nft list tables | wc -l")" 0 "both lock tables are gone"
check "the namespace answers ping again" gx client "ping -c1 -W2 10.77.0.160"
r=$(gx -t 30 client "while pgrep -x streamc >/dev/null; do sleep 0.2; done; cat /tmp/fz.report")
diag "$r"
is "$(kv "$r" verdict)" PASS "every byte of 10 flows verified across the freeze"
stall=$(kv "$r" longest_stall_ms)
if [ "${stall:-0}" -ge 1500 ] && [ "${stall:-0}" -lt 12000 ]; then
	pass "the client saw the freeze as a ${stall} ms stall"
else
	fail "stall of ${stall:-?} ms does not match a freeze of 2 to 7 s"
fi

# --- announce
gx client "setsid timeout 6 tcpdump -i br0 -e -n -l 'arp or icmp6' </dev/null >/tmp/fz.pcap.txt 2>/dev/null &"
sleep 2
sent=$(gx host1 "$M announce fz eth0")
# the IPv6 link-local address is not announced: derived from the moved
# MAC it is the same on both hosts, and may still be tentative
is "$sent" 2 "announce sent 2 frames (IPv4, IPv6 global)"
sleep 1
cap=$(gx -t 10 client "sleep 3; cat /tmp/fz.pcap.txt")
like "$cap" "52:54:00:77:01:60 > ff:ff:ff:ff:ff:ff.*Request who-has 10.77.0.160 tell 10.77.0.160" \
	"the client saw a gratuitous ARP for 10.77.0.160 from the namespace's MAC"
like "$cap" "52:54:00:77:01:60 > 33:33:00:00:00:01.*neighbor advertisement, tgt is fd00:77::160" \
	"the client saw an unsolicited NA for fd00:77::160 to all-nodes"

# --- kill, and errors
check "kill the cgroup" gx host1 "$M kill $CG"
is "$(gx host1 "grep populated $CG/cgroup.events")" "populated 0" "no task is left"
out=$(gx host1 "$M lock nosuchns 2>&1"); rc=$?
is "$rc" 1 "locking a namespace that does not exist fails"
like "$out" "nosuchns" "naming it"
out=$(gx host1 "$M freeze /sys/fs/cgroup/nosuch 2>&1"); rc=$?
is "$rc" 1 "freezing a cgroup that does not exist fails"
done_testing
