#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A service inside a network namespace on host1, whose veth is bridged onto
# the LAN, is reachable from the client: a TCP connection carries data both
# ways, over IPv4 and IPv6, and the server really runs in the namespace.
. "$(dirname "$0")/../lib.sh"

cleanup() { gx host1 'ip netns pids svc 2>/dev/null | xargs -r kill; ip netns del svc; ip link del vsvc' >/dev/null 2>&1; }
trap cleanup EXIT
cleanup

check "create namespace svc on host1 bridged onto br0" gx host1 '
	set -e
	ip netns add svc
	ip link add vsvc type veth peer name eth0 netns svc
	ip link set vsvc master br0 up
	ip -n svc link set lo up
	ip -n svc link set eth0 address 52:54:00:77:01:00 up
	ip -n svc addr add 10.77.0.100/24 dev eth0
	ip -n svc -6 addr add fd00:77::100/64 dev eth0 nodad'

# The server greets with a token generated inside the namespace, then
# echoes what it receives, upper-cased, so both directions are checked.
check "start the service in the namespace" gx host1 '
	ip netns exec svc setsid socat TCP6-LISTEN:7000,ipv6only=0,reuseaddr,fork \
		SYSTEM:"cat /proc/sys/kernel/random/boot_id | cut -c1-8; tr a-z A-Z" \
		</dev/null >/tmp/svc.log 2>&1 &
	for i in $(seq 50); do ip netns exec svc ss -ltn | grep -q :7000 && exit 0; sleep 0.1; done; exit 1'

bootid=$(gx host1 'cut -c1-8 /proc/sys/kernel/random/boot_id')
is "$(gx host1 'ip netns exec svc ss -Htln sport = :7000 | wc -l')" 1 \
	"the listener is in namespace svc"
is "$(gx host1 'ss -Htln sport = :7000 | wc -l')" 0 \
	"and not in host1's own namespace"

token=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
for addr in 10.77.0.100 '[fd00:77::100]'; do
	out=$(gx client "printf 'hello %s\n' $token | socat -t 3 - TCP:$addr:7000")
	like "$out" "^$bootid\$" "client <- service over $addr: greeting from host1"
	like "$out" "^HELLO ${token^^}\$" "client -> service -> client over $addr: bytes echoed"
done

# The client's traffic crossed the LAN to the namespace's MAC.
like "$(gx client ip neigh show 10.77.0.100)" "52:54:00:77:01:00" \
	"client resolved the namespace's MAC over the LAN"
done_testing
