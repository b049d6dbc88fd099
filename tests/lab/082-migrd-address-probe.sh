#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# An address another host holds on the LAN is not taken (issue 12): the
# destination probes each address a namespace brings (an ARP probe for
# IPv4, a neighbour solicitation for IPv6) on its bridge before it
# answers PREPARED, so before the source freezes anything.  The client
# holds 10.77.0.250 and fd00:77::250 besides its own addresses; a
# namespace on host1 claiming either (allowed by host2's policy, which
# covers the lab's whole subnet) is refused, naming the address and the
# client's MAC, and stays on host1 as it was, with nothing left on
# host2.  A namespace whose addresses answer only from its own MAC (its
# copy on the source) moves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
cleanup() {
	gx client "ip addr del 10.77.0.250/24 dev br0; ip -6 addr del fd00:77::250/64 dev br0" >/dev/null 2>&1
	mig_teardown
}
trap cleanup EXIT
check "migrd on host1 and host2, peered" mig_setup
check "the client also holds 10.77.0.250 and fd00:77::250" gx client \
	"ip addr add 10.77.0.250/24 dev br0 && ip -6 addr add fd00:77::250/64 dev br0 nodad"
cmac=$(gx client "cat /sys/class/net/br0/address")

for c in "p4 10.77.0.250/24 10.77.0.250" "p6 fd00:77::250/64 fd00:77::250"; do
	set -- $c
	check "$1: a namespace on host1 claims $3" mc host1 \
		"ns create $1 --addr $2 --mac 52:54:00:77:02:50"
	out=$(gx -t 120 host1 "$MIGCTL migrate $1 host2 2>&1; echo rc=\$?")
	diag "$out"
	is "$(sed -n 's/^rc=//p' <<<"$out")" 15 "$1: migctl migrate exits 15 (refused, nothing changed)"
	like "$out" "$3 is in use on br0 by $cmac" "$1: naming the address and the MAC that holds it"
	like "$out" "stays on host1" "$1: it stays on host1"
	check "$1: it is still there, unlocked" gx host1 \
		"[ -e /run/netns/$1 ] && ! ip netns exec $1 nft list tables | grep -q migr_"
	is "$(gx host2 "ls /run/netns; ip -br link show v$1 2>/dev/null; $MIGCTL -j status | jq '.data.migrations | length'")" \
		"0" "$1: host2 kept nothing"
	mc host1 "ns delete $1" >/dev/null
done

check "svc serving on host1" svc_start host1 20000 600
migrate host1 host2
is "$MRC" 0 "svc, whose addresses only it answers for, moves to host2"
like "$(migrd_log host2)" "2 addresses of svc probed on br0: none in use by another MAC" \
	"host2 probed both of them first"
done_testing
