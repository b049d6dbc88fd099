#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# migctl ns create/run/list/show/delete on host1, end to end: the
# namespace's veth is on br0, the workload runs in the namespace and in
# its own cgroup, the client reaches it over IPv4 and IPv6, bad arguments
# change nothing, and delete removes the tasks, veth, netns and cgroup.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1' EXIT
migrd_cleanup host1
migrd_certs
migrd_conf host1 host2
check "migrd starts on host1" migrd_start host1

# bad arguments: exit codes, and nothing created
for bad in "web --addr 10.77.0.300/24:7" "web --addr 10.77.0.100:7" \
	"web --addr 10.77.0.100/24 --mac 01:00:00:00:00:01:7" \
	"web --addr 10.77.0.100/24 --mac zz:00:00:00:00:01:7" \
	"web --addr 10.77.0.100/24 --route default,nowhere:7" \
	"web-with-a-long-name --addr 10.77.0.100/24:7" "web:7"; do
	mc host1 ns create "${bad%:*}" >/dev/null 2>&1
	is "$?" "${bad##*:}" "ns create ${bad%:*}: exit ${bad##*:}"
done
is "$(gx host1 'ip netns list | wc -l; find /sys/fs/cgroup/migr -mindepth 1 -type d 2>/dev/null | wc -l' | tr '\n' ' ')" "0 0 " \
	"rejected creates left no netns and no cgroup"
# the daemon validates too (a request that skips migctl's checks)
mkdir -p "$MSHARE/frames"
frame 8 $PV '{"ns":"x;rm","addrs":["10.77.0.100/24"]}' > "$MSHARE/frames/ns-badname"
frame 8 $PV '{"ns":"web","addrs":["10.77.0.100/24"],"evil":1}' > "$MSHARE/frames/ns-extra"
is "$(gx host1 "socat -t3 - UNIX-CONNECT:/run/migrd/migrd.sock < $GSHARE/frames/ns-badname | tail -c +9" | jq -r .code)" 7 \
	"migrd refuses a bad name itself (7)"
is "$(gx host1 "socat -t3 - UNIX-CONNECT:/run/migrd/migrd.sock < $GSHARE/frames/ns-extra | tail -c +9" | jq -r .code)" 2 \
	"migrd refuses unknown request fields (2)"

out=$(mc host1 ns create web --addr 10.77.0.100/24 --addr fd00:77::100/64 \
	--mac 52:54:00:77:01:00 --route default,10.77.0.1); rc=$?
is "$rc" 0 "ns create web: exit 0"
like "$out" "namespace web created" "and says so"
mc host1 ns create web --addr 10.77.0.101/24 >/dev/null 2>&1
is "$?" 9 "creating web again: exit 9 (exists)"
is "$(gx host1 'ip -o link show vweb | grep -o "master br0"')" "master br0" "vweb is on br0"
is "$(gx host1 'ip -n web -br addr show eth0' | awk '{print $3, $4}')" "10.77.0.100/24 fd00:77::100/64" \
	"eth0 in web has both addresses"
is "$(gx host1 'ip -n web route show default' | awk '{print $3}')" 10.77.0.1 "default route via host1"

out=$(mc host1 run web -- socat TCP6-LISTEN:7001,ipv6only=0,reuseaddr,fork EXEC:cat); rc=$?
is "$rc" 0 "run web -- socat: exit 0"
pid=$(grep -o 'pid [0-9]*' <<<"$out" | cut -d' ' -f2)
like "$pid" "^[0-9]+$" "run reports the pid ($pid)"
is "$(gx host1 "cat /proc/$pid/cgroup")" "0::/migr/web" "the workload is in cgroup migr/web"
wlns=$(gx host1 "readlink /proc/$pid/ns/net")
like "$wlns" '^net:\[[0-9]+\]$' "the workload's netns is readable ($wlns)"
is "$wlns" "$(gx host1 'ip netns exec web readlink /proc/self/ns/net')" \
	"the workload is in netns web"
isnt_host=$([ "$wlns" != "$(gx host1 'readlink /proc/self/ns/net')" ] && echo yes)
is "$isnt_host" yes "and not in host1's own netns"
gx host1 'for i in $(seq 50); do ip netns exec web ss -Htln sport = :7001 | grep -q . && exit 0; sleep 0.1; done; exit 1'
token=$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
is "$(gx client "echo $token | socat -t3 - TCP:10.77.0.100:7001")" "$token" "client reaches the workload over IPv4"
is "$(gx client "echo $token | socat -t3 - TCP:[fd00:77::100]:7001")" "$token" "and over IPv6"
like "$(gx client 'ip neigh show 10.77.0.100')" "52:54:00:77:01:00" "with the MAC given to ns create"

out=$(mc host1 ns list)
like "$out" "^web +10.77.0.100/24,fd00:77::100/64 +$pid$" "ns list: web, addresses, task"
j=$(mc host1 -j ns show web)
is "$(jq -r '.data.workloads[0].pid' <<<"$j")" "$pid" "ns show -j: the workload"
is "$(jq -r '.data.network[] | select(.type == "link" and .name == "eth0") | .mac' <<<"$j")" 52:54:00:77:01:00 \
	"ns show -j: eth0's MAC from the system"
is "$(jq -r '[.data.network[] | select(.type == "addr") | "\(.addr)/\(.prefix)"] | sort | join(",")' <<<"$j")" \
	"10.77.0.100/24,fd00:77::100/64" "ns show -j: the addresses from the system"
like "$(mc host1 ns show web)" "link: eth0 veth 52:54:00:77:01:00 mtu 1500" "ns show: eth0 as a link record"
mc host1 run nosuch -- /bin/true >/dev/null 2>&1; is "$?" 8 "run in an unknown namespace: exit 8"
out=$(mc host1 run web -- /nonexistent/cmd 2>&1); rc=$?
is "$rc" 12 "run of a missing program: exit 12 (system error)"
like "$out" "cannot start /nonexistent/cmd in web: check the program: No such file or directory" \
	"a program that is not there is reported back, before exec"
# host2 is configured but runs no migrd here: refused before anything
out=$(mc host1 migrate web host2 2>&1); rc=$?
is "$rc" 11 "migrate web host2 with host2 down: exit 11 (peer not connected)"
like "$out" "no session with host2" "and says so"
out=$(mc host1 migrate web host9 2>&1); rc=$?
is "$rc" 10 "migrate to an unknown host: exit 10"
out=$(mc host1 migrate nope host2 2>&1); rc=$?
is "$rc" 8 "migrate of an unknown namespace: exit 8"

out=$(mc host1 ns delete web); rc=$?
is "$rc" 0 "ns delete web: exit 0"
check "the workload is gone" gx host1 "! kill -0 $pid 2>/dev/null"
is "$(gx host1 'ip netns list | wc -l; ip link show vweb 2>/dev/null | wc -l; ls -d /sys/fs/cgroup/migr/web 2>/dev/null | wc -l' | tr '\n' ' ')" \
	"0 0 0 " "netns, veth and cgroup removed"
gx client "echo x | socat -t2 - TCP:10.77.0.100:7001,connect-timeout=2" >/dev/null 2>&1
isnt=$?; [ "$isnt" -ne 0 ] && pass "client can no longer connect" || fail "client still connects"
is "$(mc host1 -j ns list | jq '.data.namespaces | length')" 0 "ns list is empty"
mc host1 ns delete web >/dev/null 2>&1; is "$?" 8 "deleting it again: exit 8"
like "$(mc host1 history)" "ns +created web" "history: created"
like "$(mc host1 history)" "ns +deleted web" "history: deleted"
done_testing
