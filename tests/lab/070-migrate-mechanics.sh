#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# One live migration of a namespace, host1 -> host2, by the migration
# mechanics alone (migsrc/migdst through migtool, records handed over in
# /mnt/lab): streamd serves 20 client connections (IPv4 and IPv6, busy,
# idle, half-closed either way) and keeps accepting; the namespace is
# frozen, dumped, rebuilt on host2 and restarted there with its sockets.
# The client must see no reset, no wrong byte, every expected close, and
# get served by probes throughout; the source must send no FIN or RST on
# the moved connections and be gone afterwards.  Then a second
# migration that rolls back leaves the service on host1 untouched.
. "$(dirname "$0")/../lib.sh"

W=$B/tests/workload
T=$B/tests/tools/migtool
CG=/sys/fs/cgroup/m7
SH=${MIGR_LAB:-/run/migr-lab}/share
SERVE="$W/streamd -r 20000 -l [::]:7400 -l [::]:7401,rate=0 -l [::]:7402,linger=2 -l [::]:7403,shut=4 -s /tmp/m7.stats"
cleanup() {
	for g in host1 host2; do
		gx "$g" "echo 1 > $CG/cgroup.kill 2>/dev/null; sleep 0.3; rmdir $CG 2>/dev/null
			ip netns pids m7 2>/dev/null | xargs -r kill -9; ip netns del m7 2>/dev/null
			ip link del vm7 2>/dev/null; pkill -f 'tcpdump -i br0' ; true" >/dev/null 2>&1
	done
	gx client "pkill streamc" >/dev/null 2>&1
	rm -f "$SH"/m7.*
}
trap cleanup EXIT
cleanup

# move FROM TO: migtool dest on TO, source on FROM; commit once the
# destination is live, as the protocol does; $dst and $src hold their
# figures
move() {
	gx "$2" "setsid $T dest m7 vm7 br0 $CG /mnt/lab/m7.rec -- $SERVE </dev/null >/tmp/m7.dest 2>&1 &"
	gx "$1" "setsid $T source m7 $CG vm7 /mnt/lab/m7.rec /mnt/lab/m7.decision </dev/null >/tmp/m7.src 2>&1 &"
	for i in $(seq 200); do gx "$2" "grep -q '^live=' /tmp/m7.dest" && break; sleep 0.2; done
	dst=$(gx "$2" "cat /tmp/m7.dest")
	diag "dest: $dst"
	if [ "$(kv "$dst" live)" = 1 ]; then echo commit; else echo rollback; fi > "$SH/m7.decision"
	for i in $(seq 100); do gx "$1" "grep -q '^decision=' /tmp/m7.src" && break; sleep 0.2; done
	src=$(gx "$1" "cat /tmp/m7.src")
	diag "source: $src"
}

check "namespace m7 on host1" service_ns host1 m7 10.77.0.190/24 fd00:77::190/64 52:54:00:77:01:90
ns_listening() { gx "$1" "for i in \$(seq 50); do ip netns exec m7 ss -Htln sport = :7403 | grep -q . && exit 0; sleep 0.1; done; exit 1"; }
check "streamd runs in m7 under cgroup m7" gx host1 "mkdir $CG && setsid sh -c 'echo \$\$ > $CG/cgroup.procs; exec ip netns exec m7 $SERVE' </dev/null >/tmp/m7.log 2>&1 &"
check "it listens" ns_listening host1

gx client "rm -f /tmp/m7.report; setsid $W/streamc -c 10.77.0.190:7400 -c '[fd00:77::190]:7400' \
	-c 10.77.0.190:7401,idle -c '[fd00:77::190]:7402,halfclose=8' -c 10.77.0.190:7403,peershut \
	-n 20 -r 20000 -d 30 -p 500 -o /tmp/m7.report </dev/null >/tmp/m7.client 2>&1 &"
# FIN or RST from the service on the always-open connections (port 7400)
gx client "setsid tcpdump -i br0 -n -l 'tcp port 7400 and (tcp[tcpflags] & (tcp-fin|tcp-rst) != 0)' </dev/null >/tmp/m7.finrst 2>/dev/null &"
sleep 6

# --- the migration
move host1 host2
is "$(kv "$dst" live)" 1 "host2 rebuilt m7 and restarted streamd with its sockets"
is "$(kv "$src" decision)" commit "host1 committed"
n=$(kv "$src" sockets)
# the peershut connections may have closed before the freeze
if [ "${n:-0}" -ge 20 ]; then pass "host1 moved $n sockets (4 listeners, 16+ connections)"; else fail "host1 moved ${n:-0} sockets"; fi
is "$(gx host1 "ls /run/netns | grep -cx m7; ls -d $CG 2>/dev/null | wc -l")" "0
0" "host1 has no namespace m7 and no cgroup m7 left"
check "streamd on host2 listens in m7" ns_listening host2

# --- the client's verdict
r=$(gx -t 60 client "while pgrep -x streamc >/dev/null; do sleep 0.5; done; cat /tmp/m7.report")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "every byte of every connection verified across the move"
is "$(kv "$r" resets)" 0 "no connection was reset"
is "$(kv "$r" mismatches)" 0 "no byte lost, duplicated, reordered or changed"
is "$(kv "$r" closes_pending)" 0 "every half-close completed"
like "$(kv "$r" probes_ok)" '^[1-9][0-9]*$' "new connections were served before and after"
is "$(kv "$r" probes_failed)" 0 "no probe failed"
diag "longest stall at the client: $(kv "$r" longest_stall_ms) ms"
finrst=$(gx client "pkill -f 'tcpdump -i br0'; sleep 0.3; cat /tmp/m7.finrst")
is "$(grep -c . <<<"$finrst")" 0 "no FIN or RST on the moved connections (port 7400)"
[ -z "$finrst" ] || diag "$finrst"
gx host2 "ip netns pids m7 | xargs -r kill -USR1; sleep 0.5"
s=$(gx host2 "cat /tmp/m7.stats")
diag "streamd on host2: $s"
n=$(kv "$s" adopted)
if [ "${n:-0}" -ge 10 ]; then pass "streamd on host2 adopted $n connections"; else fail "streamd on host2 adopted ${n:-0} connections"; fi
is "$(kv "$s" mismatches)" 0 "and verified what it read"

# --- a migration that rolls back: the service stays on host2, untouched
gx client "rm -f /tmp/m7.report; setsid $W/streamc -c 10.77.0.190:7400 -c '[fd00:77::190]:7400' -n 6 -r 20000 -d 12 -p 500 -o /tmp/m7.report </dev/null >/dev/null 2>&1 &"
sleep 3
rm -f "$SH"/m7.*
gx host2 "setsid $T source m7 $CG vm7 /mnt/lab/m7.rec /mnt/lab/m7.decision </dev/null >/tmp/m7.src 2>&1 &"
for i in $(seq 100); do [ -e "$SH/m7.rec" ] && break; sleep 0.2; done
echo rollback > "$SH/m7.decision"
for i in $(seq 100); do gx host2 "grep -q '^decision=' /tmp/m7.src" && break; sleep 0.2; done
src=$(gx host2 "cat /tmp/m7.src")
diag "source: $src"
is "$(kv "$src" decision)" rollback "host2 rolled back"
is "$(gx host2 "grep frozen $CG/cgroup.events; ip netns exec m7 nft list tables | grep -c migr_lock")" "frozen 0
0" "thawed and unlocked"
r=$(gx -t 60 client "while pgrep -x streamc >/dev/null; do sleep 0.5; done; cat /tmp/m7.report")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "every byte verified across the rollback"

# --- and back to host1, where the service lived before: it must run
rm -f "$SH"/m7.*
gx client "rm -f /tmp/m7.report; setsid $W/streamc -c 10.77.0.190:7400 -c '[fd00:77::190]:7400' -n 6 -r 20000 -d 14 -p 500 -o /tmp/m7.report </dev/null >/dev/null 2>&1 &"
sleep 3
move host2 host1
is "$(kv "$dst" live)" 1 "host1 rebuilt m7 and restarted streamd"
is "$(kv "$src" decision)" commit "host2 moved m7 back to host1"
is "$(gx host1 "grep frozen $CG/cgroup.events")" "frozen 0" "the service runs on host1 (its cgroup is not frozen)"
r=$(gx -t 60 client "while pgrep -x streamc >/dev/null; do sleep 0.5; done; cat /tmp/m7.report")
diag "client: $r"
is "$(kv "$r" verdict)" PASS "every byte verified across the move back"
r=$(gx -t 30 client "$W/streamc -c 10.77.0.190:7400 -c '[fd00:77::190]:7400' -n 4 -r 20000 -d 4")
rx=$(kv "$r" rx_bytes)
if [ "${rx:-0}" -ge 100000 ]; then pass "new connections get served on host1 ($rx bytes in 4 s)"; else fail "new connections on host1 got ${rx:-0} bytes in 4 s"; fi
done_testing
