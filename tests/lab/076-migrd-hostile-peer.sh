#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Migration messages from an authenticated but misbehaving peer: a fake
# "client" peer (lab certificate, valid hello) sends malformed, lying and
# out-of-turn migration messages and a flood of PREPAREs to host1.  Each
# bad one is answered REFUSED (or ABORTED for an unknown COMMIT) with its
# reason, at most 8 migrations are taken in at once, an ABORT removes what
# was built, and migrd keeps running with nothing left behind.  The fake
# peer's policy (allow) is narrow: what it claims beyond it (a shell, a
# way out of the allowed directory, the LAN's gateway address, a MAC or a
# name it was not given) is REFUSED by name, with nothing built.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1' EXIT
migrd_cleanup host1
migrd_certs
W=$B/tests/workload
migrd_conf host1 host2 client -- "allow client program $W/" \
	"allow client address 10.77.0.128/25" "allow client mac 52:54:00:77:02" \
	"allow client namespace x*"
check "migrd starts on host1" migrd_start host1
pid=$(gx host1 'cat /run/migrd/test.pid')

F=$MSHARE/frames-mig
mkdir -p "$F"
link() { echo "{\"v\":$RV,\"type\":\"link\",\"name\":\"eth0\",\"kind\":\"veth\",\"mac\":\"52:54:00:77:02:0$1\",\"mtu\":1500}"; }
addr() { echo "{\"v\":$RV,\"type\":\"addr\",\"dev\":\"eth0\",\"family\":\"inet\",\"addr\":\"10.77.0.22$1\",\"prefix\":24}"; }
prep() {	# prep ID NS N [FROM] [WORKLOAD-JSON]
	echo "{\"mig\":\"$1\",\"ns\":\"$2\",\"from\":\"${4:-client}\",\"namespace\":{\"addrs\":[\"10.77.0.22$3/24\"],\"routes\":[],\"mac\":\"52:54:00:77:02:0$3\"},\"sockets\":${SOCKS:-0},\"records\":[$(link "$3"),$(addr "$3")]${5:+,\"workload\":$5}}"
}
# as many '..' as $W is deep, and one more: from wherever the tree is
# checked out, the path climbs to / and names /bin/sh
UP=$(printf '../%.0s' $(seq $(($(tr -cd / <<<"$W" | wc -c) + 1))))
{
	frame 2 $PV '{"version":'$PV',"host":"client","peer":"host1","capabilities":["heartbeat"]}'
	frame 13 $PV '{"mig":"c-1","ns":"x0","from":"client"}'
	frame 13 $PV "$(prep c-2 x0 0 host2)"
	frame 13 $PV "$(prep c-3 x0 0 client '{"argv":["relative/prog"]}')"
	frame 13 $PV "$(prep c-4 x0 0 client '{"argv":["/nonexistent/prog"]}')"
	frame 13 $PV '{"mig":"c-5","ns":"x0","from":"client","namespace":{"addrs":["10.77.0.220/24"],"routes":[],"mac":""},"sockets":0,"records":[{"v":'$RV',"type":"udp"}]}'
	frame 13 $PV "$(prep c-6 'bad/name' 0)"
	# within what the peer may claim but for one thing each
	frame 13 $PV "$(prep p-1 x0 0 client '{"argv":["/bin/sh","-c","id"]}')"
	frame 13 $PV "$(prep p-2 x0 0 client '{"argv":["'$W/$UP'bin/sh"]}')"
	frame 13 $PV '{"mig":"p-3","ns":"x0","from":"client","namespace":{"addrs":["10.77.0.1/24"],"routes":[],"mac":""},"sockets":0,"records":[]}'
	frame 13 $PV '{"mig":"p-4","ns":"x0","from":"client","namespace":{"addrs":["10.77.0.220/24"],"routes":[],"mac":"00:00:5e:00:01:01"},"sockets":0,"records":[]}'
	frame 13 $PV '{"mig":"p-5","ns":"x0","from":"client","namespace":{"addrs":["10.77.0.220/24"],"routes":[],"mac":""},"sockets":0,"records":[{"v":'$RV',"type":"link","name":"eth1","kind":"veth","mac":"02:00:00:00:00:09","mtu":1500}]}'
	frame 13 $PV '{"mig":"p-6","ns":"x0","from":"client","namespace":{"addrs":["10.77.0.220/24"],"routes":[],"mac":""},"sockets":0,"records":['"$(addr 0 | sed 's/10.77.0.220/10.77.0.1/')"']}'
	frame 13 $PV "$(prep p-7 web 0)"
	frame 20 $PV '{"mig":"c-99"}'
	frame 16 $PV '{"mig":"c-98","seq":1,"record":{}}'
	for i in 1 2 3 4 5 6 7 8 9; do frame 13 $PV "$(prep x-$i x$i $i)"; done
} > "$F/in"
{
	for i in 1 2 3 4 5 6 7 8; do frame 22 $PV "{\"mig\":\"x-$i\"}"; done
	frame 16 $PV '{"mig":"x-1","seq":1,"record":{}}'
} > "$F/abort"
frame 3 $PV '{"seq":1}' > "$F/hb"

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
# heartbeats every 0.5 s keep the session alive (dead-time 4 s)
beat() { echo "for i in \$(seq $1); do cat $GSHARE/frames-mig/hb; sleep 0.5; done"; }
# session SECS FIRST N SECOND M: a session of the fake peer that sends
# the frames of file FIRST, N heartbeats, SECOND, M heartbeats; what
# host1 sent back, heartbeats left out
session() {
	gx -t $(($1 + 50)) client "(cat $GSHARE/frames-mig/$2; $(beat $3); cat $GSHARE/frames-mig/$4; $(beat $5)) |
		timeout $1 openssl s_client -quiet -connect 10.77.0.1:7780 -cert $C/client.pem \
		-key $C/client-key.pem -CAfile $C/ca.pem 2>/dev/null | python3 $GSHARE/frames-mig/frames.py | grep -v '^3 '"
}
out=$(session 40 in 16 abort 6)
diag "$out"
answer() { grep "\"mig\": \"$1\"" <<<"$out" | head -1; }
like "$(answer c-1)" '^15 .*malformed request' "a PREPARE without its fields: REFUSED, malformed"
like "$(answer c-2)" '^15 .*says it is from .host2. on the session of client' "a PREPARE claiming another sender: REFUSED"
like "$(answer c-3)" '^15 .*relative/prog' "a relative workload path: REFUSED"
like "$(answer c-4)" '^15 .*not an executable path on host1' "a workload this host lacks: REFUSED"
like "$(answer c-5)" '^15 .*record 0' "a PREPARE carrying a non-network record: REFUSED"
like "$(answer c-6)" '^15 ' "a bad namespace name: REFUSED"
like "$(answer p-1)" '^15 .*client may not bring program /bin/sh here' "a shell as workload, outside policy: REFUSED by name"
like "$(answer p-2)" '^15 .*client may not bring program .*/bin/sh here' "a way out of the allowed directory by '..': REFUSED"
like "$(answer p-3)" "^15 .*client may not bring address 10.77.0.1/24 here \\(no 'allow client address' covers it\\)" "the LAN's gateway address: REFUSED"
like "$(answer p-4)" '^15 .*client may not bring MAC 00:00:5e:00:01:01' "a MAC outside the peer's prefix: REFUSED"
like "$(answer p-5)" '^15 .*client may not bring MAC 02:00:00:00:00:09' "a link record's MAC outside it: REFUSED"
like "$(answer p-6)" '^15 .*client may not bring address 10.77.0.1 here' "an address record outside: REFUSED"
like "$(answer p-7)" '^15 .*client may not bring namespace web here' "a name outside the peer's patterns: REFUSED"
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

# The committed list (what a repeated COMMIT is answered from) is kept
# per source peer.  host1 restarts with 256 moves from client that went
# live and that client never acknowledged, and one of host2's: on hello
# it tells client each of its own again (COMMITTED), refuses client's
# new PREPAREs until client says FORGET, answers client's COMMIT for
# host2's id ABORTED (the id alone is not enough), and client's FORGET
# frees room for exactly one more.
migrd_stop host1
gx host1 "python3 -c '
import json
c = [{\"peer\": \"client\", \"mig\": \"client-old-%d\" % i} for i in range(256)]
c.append({\"peer\": \"host2\", \"mig\": \"host2-keep-1\"})
json.dump({\"version\": 2, \"migrations\": [], \"committed\": c},
    open(\"/var/lib/migrd/migrations.json\", \"w\"))'"
check "migrd starts with 257 committed ids" migrd_start host1
pid=$(gx host1 'cat /run/migrd/test.pid')
{
	frame 2 $PV '{"version":'$PV',"host":"client","peer":"host1","capabilities":["heartbeat"]}'
	frame 13 $PV "$(prep f-1 x1 1)"
	frame 20 $PV '{"mig":"host2-keep-1"}'
	frame 20 $PV '{"mig":"client-old-7"}'
	frame 31 $PV '{"mig":"client-old-7"}'
	frame 31 $PV '{"mig":"host2-keep-1"}'
} > "$F/full"
{
	frame 13 $PV "$(prep f-2 x2 2)"
	frame 13 $PV "$(prep f-3 x3 3)"
	# (no ABORT: PREPARED comes after host1 probed the addresses, and
	# the session's end discards what it built)
} > "$F/full2"
out=$(session 30 full 4 full2 4)
is "$(grep -c '^21 .*client-old-' <<<"$out")" 257 "on hello: COMMITTED again for each of client's 256, and once for the COMMIT"
is "$(grep -c '^21 .*host2-keep' <<<"$out")" 0 "none for host2's"
like "$(answer f-1)" '^15 .*256 moves from client went live here and client has not acknowledged them' "client's PREPARE: REFUSED while 256 are unacknowledged"
like "$(answer host2-keep-1)" '^23 ' "client's COMMIT for host2's id: ABORTED"
like "$(answer f-2)" '^14 ' "after one FORGET: one PREPARE built"
like "$(answer f-3)" '^15 .*255 moves from client went live here .*1 more are under way' "the next: REFUSED again (the one under way counts)"
c=$(gx host1 "jq -c '[.committed[] | select(.peer == \"client\")] | length' /var/lib/migrd/migrations.json")
is "$c" 255 "the state file keeps client's 255 others"
is "$(gx host1 "jq -r '.committed[] | select(.peer == \"host2\") | .mig' /var/lib/migrd/migrations.json")" host2-keep-1 "client's FORGET of host2's id changed nothing"
check "migrd still runs, same process" gx host1 "kill -0 $pid"
# Limits per peer and of this host: "allow client sockets 1000" and
# "allow client migrations 2", and a migrd with 600 open files at most.
# A PREPARE announces how many sockets will follow; more than the policy
# allows, or more than the descriptors left could hold, is REFUSED by
# name; a third migration of client's coming in at once is REFUSED.
migrd_stop host1
gx host1 "rm -f /var/lib/migrd/migrations.json"
migrd_conf host1 host2 client -- "allow client program $W/" \
	"allow client address 10.77.0.128/25" "allow client mac 52:54:00:77:02" \
	"allow client namespace x*" "allow client sockets 1000" "allow client migrations 2"
check "migrd starts with at most 600 open files" migrd_start host1 prlimit --nofile=600
pid=$(gx host1 'cat /run/migrd/test.pid')
{
	frame 2 $PV '{"version":'$PV',"host":"client","peer":"host1","capabilities":["heartbeat"]}'
	frame 13 $PV "$(SOCKS=1001 prep s-1 x1 1)"
	frame 13 $PV "$(SOCKS=900 prep s-2 x1 1)"
	frame 13 $PV "$(SOCKS=5 prep m-1 x1 1)"
	frame 13 $PV "$(SOCKS=5 prep m-2 x2 2)"
	frame 13 $PV "$(SOCKS=5 prep m-3 x3 3)"
} > "$F/limits"
{
	frame 22 $PV '{"mig":"m-1"}'
	frame 22 $PV '{"mig":"m-2"}'
} > "$F/limits2"
out=$(session 30 limits 4 limits2 4)
diag "$out"
like "$(answer s-1)" "^15 .*client may not bring 1001 sockets here in one migration \\(allow client sockets 1000\\)" "1001 sockets announced: REFUSED by the policy"
like "$(answer s-2)" '^15 .*host1 has room for [0-9]+ more sockets, not 900 \(its limit of open files' "900 sockets with 600 open files at most: REFUSED, no room"
like "$(answer m-1)" '^14 ' "a first migration of 5 sockets: PREPARED"
like "$(answer m-2)" '^14 ' "a second: PREPARED"
like "$(answer m-3)" '^15 .*client may bring at most 2 migrations here at once' "a third at once: REFUSED"
check "migrd still runs, same process" gx host1 "kill -0 $pid"
done_testing
