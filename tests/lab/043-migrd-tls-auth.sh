#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Peer authentication on host1's peer port.  Before TLS: a connection
# from an address that is no peer's is closed at once (a flood of them
# from client included), and one peer address gets at most 4 connections
# in their handshake.  From host2's address: a certificate from another
# CA is refused in the TLS handshake (and logged), a lab-CA certificate
# whose name does not match the hello is refused, an unknown host and a
# wrong protocol version in hello are refused with a result.  None of it
# disturbs the host1-host2 session.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1 host2 client' EXIT
migrd_cleanup host1 host2 client
migrd_certs
migrd_conf host1 host2
migrd_conf host2 host1
check "migrd starts on host1" migrd_start host1
check "migrd starts on host2" migrd_start host2
for i in $(seq 40); do
	[ "$(mc host1 -j peers | jq -r '.data.peers[0].state')" = up ] && break; sleep 0.25
done
is "$(mc host1 -j peers | jq -r '.data.peers[0].state')" up "host1-host2 session is up"

C=$GSHARE/certs
# tls_send NAME CERT: from host2's address (a peer's: others are not
# heard), send frames file NAME over TLS to host1 with certificate CERT;
# print the JSON of host1's reply frame(s).
tls_send() {
	gx host2 "(cat $GSHARE/frames/$1; sleep 4) | timeout 15 openssl s_client -quiet \
		-connect 10.77.0.1:7780 -cert $C/$2.pem -key $C/$2-key.pem -CAfile $C/ca.pem \
		2>/tmp/s_client.err | tail -c +9; cat /tmp/s_client.err >&2"
}
mkdir -p "$MSHARE/frames"

# 1. a certificate from a foreign CA, with host1's own name in it
frame 2 $PV '{"version":'$PV',"host":"host2","peer":"host1","capabilities":["heartbeat"]}' \
	> "$MSHARE/frames/hello-host2"
out=$(tls_send hello-host2 rogue 2>&1)
like "$out" "alert unknown ca" "rogue-CA certificate: host1 aborts the handshake (unknown ca)"
like "$(migrd_log host1)" "connection refused: TLS handshake failed: .*certificate verify failed.*unable to get local issuer" \
	"host1 logs the refused rogue certificate with the reason"

# 2. a migrd whose certificate comes from the rogue CA
cat > "$MSHARE/client.conf" <<CONF
hostname host0
listen 10.77.0.10 port 7780
peer host1 10.77.0.1 port 7780
certificate $C/rogue.pem
key $C/rogue-key.pem
ca $C/rogue-ca.pem
state-dir /var/lib/migrd
CONF
check "a migrd with a rogue certificate starts on client" migrd_start client
sleep 3
j=$(mc client -j peers)
like "$(jq -r '.data.peers[0].state' <<<"$j")" "^(connecting|tls-handshake)$" \
	"rogue migrd never gets a session"
is "$(jq -r '.data.peers[0].sessions' <<<"$j")" 0 "not even once"
like "$(jq -r '.data.peers[0].last_error' <<<"$j")" "connection closed by peer during TLS handshake|unexpected eof|reset by peer" \
	"client is no peer of host1: closed before TLS"
like "$(migrd_log host1)" "peer port: refused [0-9]+ connections? before TLS \\(last: 10\\.77\\.0\\.10:[0-9]+ is no peer's address\\)" \
	"host1 logs the refusal, with its count"
is "$(mc host1 -j status | jq -r .data.peers_up)" 1 "host1 still has exactly its one peer up"

# 3. a lab-CA certificate (CN=client) claiming to be host2
out=$(tls_send hello-host2 client 2>/dev/null)
is "$(jq -r .code <<<"$out" 2>/dev/null)" 3 "hello as host2 with client's certificate: result 3 (denied)"
like "$(migrd_log host1)" "hello as 'host2' but certificate is CN=client" "logged with the certificate name"

# 4. an unknown host, and a wrong version in hello
frame 2 $PV '{"version":'$PV',"host":"client","peer":"host1","capabilities":[]}' \
	> "$MSHARE/frames/hello-client"
out=$(tls_send hello-client client 2>/dev/null)
is "$(jq -r .code <<<"$out" 2>/dev/null)" 10 "hello from a host that is not a peer: result 10"
like "$(migrd_log host1)" "hello from unknown host 'client'" "logged"
frame 2 $PV '{"version":99,"host":"host2","peer":"host1","capabilities":[]}' \
	> "$MSHARE/frames/hello-v99"
out=$(tls_send hello-v99 host2 2>/dev/null)
is "$(jq -r .code <<<"$out" 2>/dev/null)" 5 "hello with protocol version 99: result 5"
like "$(migrd_log host1)" "hello with protocol version 99, ours is $PV" "logged"

# 5. before TLS: a flood from client, and too many handshakes from one
# peer address.  hold N T1 T2: N connections to host1's peer port, held
# open T2 seconds; prints how many host1 closed within T1, and within T2
cat > "$MSHARE/hold.py" <<'PY'
import socket, sys, time
n, t1, secs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
socks = []
start = time.time()
at_t1 = None
for i in range(n):
    s = socket.create_connection(("10.77.0.1", 7780), timeout=5)
    s.settimeout(0.05)
    socks.append(s)
closed, end = set(), time.time() + secs
while time.time() < end and len(closed) < n:
    if at_t1 is None and time.time() - start >= t1:
        at_t1 = len(closed)
    for i, s in enumerate(socks):
        if i in closed:
            continue
        try:
            if s.recv(1) == b"":
                closed.add(i)
        except socket.timeout:
            pass
        except OSError:
            closed.add(i)
print(at_t1 if at_t1 is not None else len(closed), len(closed))
PY
is "$(gx -t 60 client "python3 $GSHARE/hold.py 200 2 3" | cut -d' ' -f1)" 200 "200 connections from client (no peer's address): all closed at once"
# handshake-timeout is 10 s in the lab
is "$(gx -t 60 host2 "python3 $GSHARE/hold.py 8 2 14")" "4 8" \
	"8 silent connections from host2's address: 4 closed at once, 4 held until handshake-timeout"
like "$(migrd_log host1)" "has 4 connections in their handshake" "logged"
like "$(migrd_log host1)" "no hello within 10 s" "the held ones: closed for no hello within 10 s"

is "$(mc host1 -j peers | jq -r '.data.peers[0].state')" up "host1-host2 session survived all of it"
is "$(mc host1 -j peers | jq -r '.data.peers[0].sessions')" 1 "without a reconnect"
done_testing
