#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Malformed, oversize, wrong-version and wrong-type frames on the peer
# channel (after a valid TLS handshake with a lab certificate) each end
# that connection with a logged reason and a result; migrd keeps running
# and the host1-host2 session is untouched.  (The control socket side is
# in 041.)  What a peer sends is parsed by the unprivileged TLS process
# (migrd/chan_rx.c), not by migrd: the frames it refuses are logged as
# its own, and JSON that nests deeper than a tree goes (32) stops there.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1 host2' EXIT
migrd_cleanup host1 host2
migrd_certs
# client is a peer of host1 (no migrd there): only peers' addresses get a
# TLS handshake
migrd_conf host1 host2 client
migrd_conf host2 host1
check "migrd starts on host1" migrd_start host1
check "migrd starts on host2" migrd_start host2
for i in $(seq 40); do
	[ "$(mc host1 -j peers | jq -r '.data.peers[0].state')" = up ] && break; sleep 0.25
done
is "$(mc host1 -j peers | jq -r '.data.peers[0].state')" up "host1-host2 session is up"

C=$GSHARE/certs
mkdir -p "$MSHARE/frames"
frame 2 $PV 'nope!' > "$MSHARE/frames/peer-malformed"
frame 2 $PV '[1,2,3]' > "$MSHARE/frames/peer-array"
frame_hdr 2 $PV 2147483647 > "$MSHARE/frames/peer-oversize"
frame 2 9 '{}' > "$MSHARE/frames/peer-version"
frame 4 $PV '{}' > "$MSHARE/frames/peer-ctltype"
frame 3 $PV '{"seq":1}' > "$MSHARE/frames/peer-early-heartbeat"
deep=$(printf '{"a":%s%s}' "$(printf '[%.0s' $(seq 33))" "$(printf ']%.0s' $(seq 33))")
frame 2 $PV "$deep" > "$MSHARE/frames/peer-deep"
head -c 70000 /dev/zero | tr '\0' 'x' > "$MSHARE/frames/pad"
{ frame_hdr 2 $PV 70010; printf '{"x":"'; cat "$MSHARE/frames/pad"; printf '"}'; } \
	> "$MSHARE/frames/peer-oversize-real"

# by the TLS process: NAME:WHY, what its log says
declare -A tls_says=(
	[malformed]="type 2, hello, version $PV, 5 bytes\\) is refused: payload is not a JSON object"
	[array]="type 2, hello, version $PV, 7 bytes\\) is refused: payload is not a JSON object"
	[deep]="type 2, hello, version $PV, ${#deep} bytes\\) is refused: it nests deeper than 32 levels"
	[oversize]="type 2, hello, version $PV, 2147483647 bytes\\) is refused: frame too big"
	[version]="type 2, hello, version 9, 2 bytes\\) is refused: protocol version mismatch"
)
for f in malformed:2:"payload is not a JSON object" array:2:"payload is not a JSON object" \
	deep:2:"payload is not a JSON object" \
	oversize:6:"frame of 2147483647 bytes is above max-message 65536" \
	oversize-real:6:"frame of 70010 bytes is above max-message" \
	version:5:"frame version 9, ours is $PV" \
	ctltype:-:"message type 4 \\(status\\) is not for the peer channel" \
	early-heartbeat:-:"heartbeat before hello"; do
	name=${f%%:*}; rest=${f#*:}; code=${rest%%:*}; msg=${rest#*:}
	out=$(gx client "(cat $GSHARE/frames/peer-$name; sleep 2) | timeout 10 openssl s_client \
		-quiet -connect 10.77.0.1:7780 -cert $C/client.pem -key $C/client-key.pem \
		-CAfile $C/ca.pem 2>/dev/null | tail -c +9")
	if [ "$code" != - ]; then
		is "$(jq -r .code <<<"$out" 2>/dev/null)" "$code" "peer: $name frame gets result $code"
	fi
	like "$(migrd_log host1)" "connection refused: $msg" "peer: $name frame: connection ended, reason logged"
	if [ -n "${tls_says[$name]:-}" ]; then
		like "$(migrd_log host1)" "migrd-tls: tls: session [0-9]+: the peer's frame \\(${tls_says[$name]}" \
			"peer: $name frame: refused by the TLS process, which parsed it"
	fi
	check "peer: migrd answers after the $name frame" mc host1 status
done
check "host1's migrd is the same process" gx host1 'kill -0 $(cat /run/migrd/test.pid)'
is "$(mc host1 -j peers | jq -r '.data.peers[0].state')" up "host1-host2 session still up"
is "$(mc host1 -j peers | jq -r '.data.peers[0].sessions')" 1 "and never reconnected"
done_testing
