#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The socket engine across hosts for what 030 does not cover: a connected
# UDP socket with options set (its address, peer and options survive;
# the peer on client sees datagrams from the same address and port, and
# its replies reach the restored socket), a socket at an urgent mark
# (refused, with the reason), and a TCP connection whose
# both ends live in the namespace (both moved, each with the bytes the
# other had sent and it had not read yet).  Dumped with sktool on host1,
# the namespace rebuilt on host2 from its records (nsmech), restored
# there with sktool.
. "$(dirname "$0")/../lib.sh"

T=$B/tests/tools
M=$T/nsmech
SH=/mnt/lab/sk032
HSH=${MIGR_LAB:-/run/migr-lab}/share/sk032
cleanup() {
	service_ns_del host1 sk
	gx host2 "ip netns pids sk 2>/dev/null | xargs -r kill -9; $M delns sk vsk" >/dev/null 2>&1
	gx client "pkill -f sk032-peer" >/dev/null 2>&1
	rm -rf "$HSH"
}
trap cleanup EXIT
cleanup
mkdir -p "$HSH"

check "namespace sk on host1" service_ns host1 sk 10.77.0.132/24 fd00:77::132/64 52:54:00:77:01:32
check "its records" gx host1 "$M dumpns sk > $SH/ns.rec"

# The holder: a connected UDP socket with options, and an in-namespace
# TCP pair with unread bytes each way.  It writes "pid udpfd afd cfd".
check "holder runs in sk" gx host1 "ip netns exec sk setsid python3 -c '
import socket, os, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, 42)
u.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, 5)
u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
u.bind((\"10.77.0.132\", 9000)); u.connect((\"10.77.0.10\", 9001))
l = socket.socket(); l.bind((\"10.77.0.132\", 9100)); l.listen(1)
c = socket.create_connection((\"10.77.0.132\", 9100)); a, _ = l.accept(); l.close()
c.sendall(b\"to-a-before-move\"); a.sendall(b\"to-c-before-move\")
l = socket.socket(); l.bind((\"10.77.0.132\", 9200)); l.listen(1)
o1 = socket.create_connection((\"10.77.0.132\", 9200)); o2, _ = l.accept(); l.close()
o1.send(b\"!\", socket.MSG_OOB)
time.sleep(0.5)
open(\"$SH/holder\", \"w\").write(\"%d %d %d %d %d\" % (os.getpid(), u.fileno(), a.fileno(), c.fileno(), o2.fileno()))
time.sleep(600)' </dev/null >/tmp/sk032.log 2>&1 &
	for i in \$(seq 50); do [ -s $SH/holder ] && exit 0; sleep 0.1; done; exit 1"
read -r pid ufd afd cfd ofd < "$HSH/holder"
out=$(gx host1 "ip netns exec sk $T/sktool check --pid $pid --fd $ofd 2>&1"); rc=$?
is "$rc" 1 "a socket at an urgent mark is refused by sktool check"
like "$out" "urgent data pending" "with the reason"

# The UDP peer on client: answers each datagram, noting where it came from.
gx client "setsid python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"10.77.0.10\", 9001))
while True:
    d, src = s.recvfrom(100)
    open(\"$SH/peer.log\", \"a\").write(\"%s %s:%d\\n\" % (d.decode(), src[0], src[1]))
    s.sendto(b\"pong-\" + d, src)
' sk032-peer </dev/null >/dev/null 2>&1 &"

gx host1 "ip netns exec sk nft add table inet sklock
	ip netns exec sk nft add chain inet sklock out '{ type filter hook output priority 0; policy accept; oif != lo drop; }'
	ip netns exec sk nft add chain inet sklock in '{ type filter hook input priority 0; policy accept; iif != lo drop; }'"
check "dump the UDP socket and both ends of the pair" gx host1 "set -e
	ip netns exec sk $T/sktool dump --pid $pid --fd $ufd --id 1 > $SH/socks.rec
	ip netns exec sk $T/sktool dump --pid $pid --fd $afd --id 2 >> $SH/socks.rec
	ip netns exec sk $T/sktool dump --pid $pid --fd $cfd --id 3 >> $SH/socks.rec"
recs=$(cat "$HSH/socks.rec")
like "$recs" '"proto":"udp".*"state":"ESTABLISHED"' "the UDP record is a connected socket"
is "$(grep -c '"proto":"tcp"' <<<"$recs")" 2 "two TCP records, one per end of the pair"
gx host1 "kill -9 $pid"
service_ns_del host1 sk

check "rebuild sk on host2, locked, attached" gx host2 "$M buildns sk vsk --lock < $SH/ns.rec && $M attach vsk br0"
out=$(gx -t 60 host2 "ip netns exec sk timeout 50 $T/sktool restore --in $SH/socks.rec \
	--unlock '$M unlock sk; $M announce sk eth0 >/dev/null' --resume -- python3 -c '
import socket, time
u = socket.socket(fileno=3)
a = socket.socket(fileno=4); c = socket.socket(fileno=5)
print(\"mark\", u.getsockopt(socket.SOL_SOCKET, socket.SO_MARK))
print(\"priority\", u.getsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY))
print(\"rcvbuf\", u.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
print(\"udp-local\", \"%s:%d\" % u.getsockname(), \"udp-peer\", \"%s:%d\" % u.getpeername())
u.settimeout(5); u.send(b\"ping-from-host2\"); print(\"udp-reply\", u.recv(100).decode())
a.settimeout(5); c.settimeout(5)
print(\"a-read\", a.recv(100).decode()); print(\"c-read\", c.recv(100).decode())
c.sendall(b\"after\"); a.sendall(b\"move\")
print(\"a-read2\", a.recv(100).decode()); print(\"c-read2\", c.recv(100).decode())
'" 2>&1)
diag "$out"
like "$out" "^mark 42$" "SO_MARK reads back 42 on host2"
like "$out" "^priority 5$" "SO_PRIORITY reads back 5"
like "$out" "^rcvbuf 131072$" "SO_RCVBUF reads back as set (65536, doubled by the kernel)"
like "$out" "^udp-local 10.77.0.132:9000 udp-peer 10.77.0.10:9001$" "the UDP socket keeps its address and peer"
like "$out" "^udp-reply pong-ping-from-host2$" "the peer's reply reaches the restored UDP socket"
like "$(gx client "cat $SH/peer.log")" "^ping-from-host2 10.77.0.132:9000$" \
	"the peer saw the datagram from the same address and port"
like "$out" "^a-read to-a-before-move$" "one end of the pair kept the bytes the other sent before the move"
like "$out" "^c-read to-c-before-move$" "and the other end likewise"
like "$out" "^a-read2 after$" "the pair carries new bytes one way"
like "$out" "^c-read2 move$" "and the other"
done_testing
