#!/usr/bin/env bash
# Migration messages from an authenticated but misbehaving peer: a fake
# "client" peer (lab certificate, valid hello) sends malformed, lying and
# out-of-turn migration messages and a flood of PREPAREs to host1.  Each
# bad one is answered REFUSED (or ABORTED for an unknown COMMIT) with its
# reason, at most 8 migrations are taken in at once, an ABORT removes what
# was built, and migrd keeps running with nothing left behind.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1' EXIT
migrd_cleanup host1
migrd_certs
migrd_conf host1 host2 client
check "migrd starts on host1" migrd_start host1
pid=$(gx host1 'cat /run/migrd/test.pid')

F=$MSHARE/frames-mig
mkdir -p "$F"
link() { echo "{\"v\":1,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"veth\",\"mac\":\"52:54:00:77:02:0$1\",\"mtu\":1500}"; }
addr() { echo "{\"v\":1,\"type\":\"addr\",\"dev\":\"eth0\",\"family\":\"inet\",\"addr\":\"10.77.0.22$1\",\"prefix\":24}"; }
prep() {	# prep ID NS N [FROM] [WORKLOAD-JSON]
	echo "{\"mig\":\"$1\",\"ns\":\"$2\",\"from\":\"${4:-client}\",\"namespace\":{\"addrs\":[\"10.77.0.22$3/24\"],\"routes\":[],\"mac\":\"52:54:00:77:02:0$3\"},\"records\":[$(link "$3"),$(addr "$3")]${5:+,\"workload\":$5}}"
}
{
	frame 2 1 '{"version":1,"host":"client","peer":"host1","capabilities":["heartbeat"]}'
	frame 13 1 '{"mig":"c-1","ns":"x0","from":"client"}'
	frame 13 1 "$(prep c-2 x0 0 host2)"
	frame 13 1 "$(prep c-3 x0 0 client '{"argv":["relative/prog"]}')"
	frame 13 1 "$(prep c-4 x0 0 client '{"argv":["/nonexistent/prog"]}')"
	frame 13 1 '{"mig":"c-5","ns":"x0","from":"client","namespace":{"addrs":["10.77.0.220/24"],"routes":[],"mac":""},"records":[{"v":1,"type":"udp"}]}'
	frame 13 1 "$(prep c-6 'bad/name' 0)"
	frame 20 1 '{"mig":"c-99"}'
	frame 16 1 '{"mig":"c-98","seq":1,"record":{}}'
	for i in 1 2 3 4 5 6 7 8 9; do frame 13 1 "$(prep x-$i x$i $i)"; done
} > "$F/in"
{
	for i in 1 2 3 4 5 6 7 8; do frame 22 1 "{\"mig\":\"x-$i\"}"; done
	frame 16 1 '{"mig":"x-1","seq":1,"record":{}}'
} > "$F/abort"
frame 3 1 '{"seq":1}' > "$F/hb"

# Each frame host1 sends back, as "TYPE JSON" lines.
cat > "$F/frames.py" <<'PY'
import json, struct, sys
b = sys.stdin.buffer.read()
while len(b) >= 8:
    t, v, n = struct.unpack(">HHI", b[:8])
    if len(b) < 8 + n:
        print("truncated", t, n)
        break
    try:
        print(t, json.dumps(json.loads(b[8:8 + n]), sort_keys=True))
    except ValueError:
        print("bad", t, b[8:8 + n][:80])
    b = b[8 + n:]
PY
C=$GSHARE/certs
# heartbeats every 0.5 s keep the session alive (dead-time 2 s)
beat() { echo "for i in \$(seq $1); do cat $GSHARE/frames-mig/hb; sleep 0.5; done"; }
out=$(gx -t 90 client "(cat $GSHARE/frames-mig/in; $(beat 16); cat $GSHARE/frames-mig/abort; $(beat 6)) |
	timeout 40 openssl s_client -quiet -connect 10.77.0.1:7780 -cert $C/client.pem \
	-key $C/client-key.pem -CAfile $C/ca.pem 2>/dev/null | python3 $GSHARE/frames-mig/frames.py | grep -v '^3 '")
diag "$out"
answer() { grep "\"mig\": \"$1\"" <<<"$out" | head -1; }
like "$(answer c-1)" '^15 .*malformed prepare' "a PREPARE without its fields: REFUSED, malformed"
like "$(answer c-2)" '^15 .*says it is from .host2. on the session of client' "a PREPARE claiming another sender: REFUSED"
like "$(answer c-3)" '^15 .*relative/prog' "a relative workload path: REFUSED"
like "$(answer c-4)" '^15 .*not an executable path on host1' "a workload this host lacks: REFUSED"
like "$(answer c-5)" '^15 .*record 0' "a PREPARE carrying a non-network record: REFUSED"
like "$(answer c-6)" '^15 ' "a bad namespace name: REFUSED"
like "$(answer c-99)" '^23 ' "COMMIT for a migration never seen: ABORTED"
is "$(answer c-98)" "" "a RECORD for no migration: ignored"
n=$(grep -c '^14 ' <<<"$out")
is "$n" 8 "8 valid PREPAREs built and answered PREPARED"
like "$(answer x-9)" '^15 .*at most 8 migrations at once' "the 9th: REFUSED, at most 8 at once"
check "migrd still runs, same process" gx host1 "kill -0 $pid"
for i in $(seq 50); do
	[ "$(gx host1 "ls /run/netns | grep -c '^x'")" = 0 ] && break; sleep 0.2
done
is "$(gx host1 "ls /run/netns | grep -c '^x'; ip -br link | grep -c '^vx'")" "0
0" "after ABORT nothing of them is left: no netns, no veth"
is "$(mc host1 -j status | jq '.data.migrations | length')" 0 "no migration left in migrd"
is "$(mc host1 -j ns list | jq '.data.namespaces | length')" 0 "and no namespace"

# A session lost in the middle of a migration coming in: the records
# still to come are gone with it, so host1 discards at once.
out=$(gx -t 60 client "(cat $GSHARE/frames-mig/in) | timeout 20 openssl s_client -quiet \
	-connect 10.77.0.1:7780 -cert $C/client.pem -key $C/client-key.pem -CAfile $C/ca.pem \
	2>/dev/null | python3 $GSHARE/frames-mig/frames.py | grep -c '^14 '")
is "$out" 8 "8 PREPAREs built again, then the fake peer hangs up"
for i in $(seq 50); do
	[ "$(gx host1 "ls /run/netns | grep -c '^x'")" = 0 ] && break; sleep 0.2
done
is "$(gx host1 "ls /run/netns | grep -c '^x'")" 0 "the session's loss discarded them, well before migrate-timeout (30 s)"
check "migrd still runs, same process" gx host1 "kill -0 $pid"
done_testing
