#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A namespace's network read on host1 (nsdump) and built again on host2
# from those records (nsbuild), as a migration does before the freeze:
# same MAC, MTU, addresses and routes; built locked and detached, so the
# LAN cannot reach it until it is attached and unlocked; then it answers
# from host2.  A second build over an existing namespace is refused.
. "$(dirname "$0")/../lib.sh"

M=$B/tests/tools/nsmech
cleanup() {
	service_ns_del host1 nr
	gx host2 "ip netns pids nr 2>/dev/null | xargs -r kill -9; $M delns nr vnr" >/dev/null 2>&1
	rm -f "${MIGR_LAB:-/run/migr-lab}/share/nr.rec"
}
trap cleanup EXIT
cleanup

check "namespace nr on host1 with two addresses per family and routes" \
	service_ns host1 nr 10.77.0.180/24 fd00:77::180/64 52:54:00:77:01:80
check "extra address, MTU, routes" gx host1 "set -e
	ip -n nr link set eth0 mtu 1400
	ip -n nr addr add 10.77.0.181/24 dev eth0
	ip -n nr -6 addr add fd00:77::181/64 dev eth0 nodad
	ip -n nr route add default via 10.77.0.1 metric 50
	ip -n nr route add 10.88.0.0/16 via 10.77.0.2
	ip -n nr -6 route add fd88::/32 via fd00:77::2"

show='ip -n nr -br link show eth0 | awk "{print \$3}"; ip -n nr link show eth0 | grep -o "mtu [0-9]*";
	ip -n nr -4 -br addr show eth0 | awk "{\$1=\$2=\"\"; print}"; ip -n nr -6 addr show eth0 scope global | grep -o "inet6 [^ ]*";
	ip -n nr route | grep -v "proto kernel" | sed "s/ linkdown//"; ip -n nr -6 route | grep via | sed "s/ linkdown//"'
before=$(gx host1 "$show")
like "$before" "10.77.0.180/24 10.77.0.181/24" "(the comparison sees the addresses)"
diag "$before"

check "dump the records on host1" gx host1 "$M dumpns nr > /mnt/lab/nr.rec"
recs=$(gx host1 "cat /mnt/lab/nr.rec")
is "$(grep -c '"type":"addr"' <<<"$recs")" 4 "four addresses carried (no link-local, no loopback)"
is "$(grep -c '"type":"route"' <<<"$recs")" 3 "three routes carried (none the kernel makes itself)"
service_ns_del host1 nr

check "build nr on host2 from the records, locked" gx host2 "$M buildns nr vnr --lock < /mnt/lab/nr.rec"
after=$(gx host2 "$show")
is "$after" "$before" "MAC, MTU, addresses and routes are the same on host2"
is "$(gx host2 "$M locked nr")" yes "the rebuilt namespace is locked"
like "$(gx host2 'ip -br link show vnr')" "DOWN" "its outer end is down and on no bridge"
out=$(gx host2 "$M buildns nr vnr < /mnt/lab/nr.rec 2>&1"); rc=$?
is "$rc" 1 "building over an existing namespace is refused"
like "$out" "File exists" "saying why"

if gx client "ping -c1 -W1 10.77.0.181" >/dev/null 2>&1; then
	fail "detached, the namespace is not reachable"
else
	pass "detached, the namespace is not reachable"
fi
check "attach to br0, unlock, announce" gx host2 "$M attach vnr br0 && $M unlock nr && $M announce nr eth0 >/dev/null"
check "client reaches 10.77.0.181 on host2" gx client "ping -c1 -W3 10.77.0.181"
check "client reaches fd00:77::180 on host2" gx client "ping -6 -c1 -W3 fd00:77::180"
check "the namespace reaches host1 through its restored default route" gx host2 "ip netns exec nr ping -c1 -W3 10.77.0.1"
check "delete it" gx host2 "$M delns nr vnr"
is "$(gx host2 'ls /run/netns | grep -cx nr; ip -br link show vnr 2>/dev/null | wc -l')" "0
0" "namespace and veth are gone"
done_testing
