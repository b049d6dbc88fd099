#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The three guests reach each other over the lab LAN, IPv4 and IPv6, and
# the LAN is the vde switch: each guest sees the others' MACs on br0.
. "$(dirname "$0")/../lib.sh"

declare -A v4=([host1]=10.77.0.1 [host2]=10.77.0.2 [client]=10.77.0.10)
declare -A v6=([host1]=fd00:77::1 [host2]=fd00:77::2 [client]=fd00:77::10)
declare -A mac=([host1]=52:54:00:77:00:01 [host2]=52:54:00:77:00:02 [client]=52:54:00:77:00:0a)

for a in host1 host2 client; do
	for b in host1 host2 client; do
		[ "$a" = "$b" ] && continue
		check "$a reaches $b over IPv4" gx "$a" ping -c1 -W3 "${v4[$b]}"
		check "$a reaches $b over IPv6" gx "$a" ping -6 -c1 -W3 "${v6[$b]}"
		like "$(gx "$a" ip neigh show "${v4[$b]}")" "${mac[$b]}" \
			"$a learned $b's MAC on the LAN"
	done
done
done_testing
