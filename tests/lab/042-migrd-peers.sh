#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The peer channel between host1 and host2: TLS 1.3 with certificates from
# the lab CA, hello, heartbeats; a stopped peer is declared dead within
# dead-time and the session comes back (with backoff) when it resumes; a
# restarted peer is reconnected.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'gx host2 "kill -CONT \$(cat /run/migrd/test.pid 2>/dev/null) 2>/dev/null"; migrd_cleanup host1 host2' EXIT
migrd_cleanup host1 host2
migrd_certs
migrd_conf host1 host2
migrd_conf host2 host1
check "migrd starts on host1" migrd_start host1
check "migrd starts on host2" migrd_start host2

# wait_peer GUEST PEER STATE: until "peers -j" shows STATE (or not
# STATE, for !STATE) (40 s: covers the dialer's backoff of 1, 2, 4, 8, 16 s)
wait_peer() {
	local i s
	for i in $(seq 160); do
		s=$(mc "$1" -j peers | jq -r --arg p "$2" '.data.peers[] | select(.name == $p) | .state')
		case "$3" in
		!*) [ -n "$s" ] && [ "$s" != "${3#!}" ] && return 0 ;;
		*) [ "$s" = "$3" ] && return 0 ;;
		esac
		sleep 0.25
	done
	diag "$1: peer $2 is '$s', wanted '$3'"
	return 1
}

check "host1 sees host2 up" wait_peer host1 host2 up
check "host2 sees host1 up" wait_peer host2 host1 up
out=$(mc host1 peers)
like "$out" "^host2 +10.77.0.2:7780 +up +TLSv1.3 +TLS_" "migctl peers on host1: host2 up with TLSv1.3"
j=$(mc host1 -j peers)
is "$(jq -r '.data.peers[0].certificate' <<<"$j")" "CN=host2 issuer CN=migr lab CA" \
	"host2's certificate is from the lab CA"
is "$(jq -r '.data.peers[0].role' <<<"$j")" dialer "host1 (first name) dials"
is "$(mc host2 -j peers | jq -r '.data.peers[0].role')" listener "host2 listens"
like "$(mc host2 -j peers | jq -r '.data.peers[0].remote')" "^10.77.0.1:" "host2's session comes from 10.77.0.1"
sleep 1.5
hb=$(mc host2 -j peers | jq -r '.data.peers[0].heartbeats_rx')
[ "$hb" -ge 2 ] 2>/dev/null && pass "heartbeats flow ($hb received)" || fail "heartbeats flow ($hb)"
is "$(mc host1 -j status | jq -r .data.peers_up)" 1 "status counts 1 peer up"
# both announce deflate (compress, the default): one stream each way
is "$(mc host1 -j peers | jq -r '.data.peers[0].compress.method')" deflate "host1's session is compressed"
is "$(mc host2 -j peers | jq -r '.data.peers[0].compress.method')" deflate "and host2's"
is "$(mc host2 -j peers | jq -c '.data.peers[0].compress | [.json_in > 0, .wire_in > 0]')" "[true,true]" \
	"the heartbeats came through the stream"

# a frozen peer is dead after dead-time (4 s)
gx host2 'kill -STOP $(cat /run/migrd/test.pid)'
t0=$(date +%s%N)
check "host1 declares frozen host2 dead" wait_peer host1 host2 !up
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -le 8000 ] && pass "within dead-time + heartbeat + polling ($ms ms)" || fail "dead detection took $ms ms"
like "$(mc host1 -j peers | jq -r '.data.peers[0].last_error')" "dead: nothing received for" \
	"the reason is recorded"
like "$(migrd_log host1)" "host2 down: dead: nothing received" "and logged"
gx host2 'kill -CONT $(cat /run/migrd/test.pid)'
check "the session comes back after host2 resumes" wait_peer host1 host2 up
like "$(mc host1 -j peers | jq -r '.data.peers[0].sessions')" "^[2-9]" "it is a new session"

# a restarted peer, now without compression: the session falls back to
# plain JSON on both sides
migrd_stop host2
check "host1 notices host2 stopped" wait_peer host1 host2 !up
migrd_conf host2 host1 -- "compress none"
check "migrd restarts on host2 (compress none)" migrd_start host2
check "host1 reconnects to the restarted host2" wait_peer host1 host2 up
is "$(mc host1 -j peers | jq -r '.data.peers[0].compress')" none "host1 does not compress for a peer that does not announce it"
is "$(mc host2 -j peers | jq -r '.data.peers[0].compress')" none "nor does host2"
hb=$(mc host2 -j peers | jq -r '.data.peers[0].heartbeats_rx')
sleep 1.5
hb2=$(mc host2 -j peers | jq -r '.data.peers[0].heartbeats_rx')
[ "$hb2" -gt "$hb" ] 2>/dev/null && pass "heartbeats flow in plain JSON ($hb, then $hb2)" || fail "heartbeats in plain JSON: $hb, then $hb2"
like "$(mc host1 history)" "peer +host2 up" "history records the peer events"
done_testing
