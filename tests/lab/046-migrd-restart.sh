#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A migrd restart keeps its namespaces: state.json is re-read, the
# namespace and its workload (still in its cgroup) are found again and
# still serve the client; a namespace removed behind migrd's back while it
# was down is forgotten; delete after the restart cleans up.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1; gx host1 "ip netns del gone; ip link del vgone" >/dev/null 2>&1' EXIT
migrd_cleanup host1
migrd_certs
migrd_conf host1 host2
check "migrd starts on host1" migrd_start host1
check "ns create keep" mc host1 ns create keep --addr 10.77.0.101/24
check "ns create gone" mc host1 ns create gone --addr 10.77.0.102/24
pid=$(mc host1 -j run keep -- socat TCP-LISTEN:7002,reuseaddr,fork EXEC:cat | jq -r .data.pid)
like "$pid" "^[0-9]+$" "workload started ($pid)"
gx host1 'for i in $(seq 50); do ip netns exec keep ss -Htln sport = :7002 | grep -q . && exit 0; sleep 0.1; done; exit 1'
is "$(gx host1 'jq -r "[.namespaces[].name] | join(\",\")" /var/lib/migrd/state.json')" "keep,gone" \
	"state.json lists both namespaces"

old=$(gx host1 'cat /run/migrd/test.pid')
migrd_stop host1
gx host1 'ip link del vgone; ip netns del gone'
check "migrd starts again" migrd_start host1
isnt_same=$([ "$(gx host1 'cat /run/migrd/test.pid')" != "$old" ] && echo yes)
is "$isnt_same" yes "it is a new process"
like "$(mc host1 ns list)" "^keep +10.77.0.101/24 +$pid$" "keep is back, with its workload's pid from the cgroup"
is "$(mc host1 -j ns list | jq -r '[.data.namespaces[].name] | join(",")')" keep "gone was forgotten"
like "$(migrd_log host1)" "gone is in /var/lib/migrd/state.json but gone from the system" "and that is logged"
token=$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
is "$(gx client "echo $token | socat -t3 - TCP:10.77.0.101:7002")" "$token" "the workload still serves the client"
check "ns delete keep after the restart" mc host1 ns delete keep
# it is init's child now: gone, or a zombie until init reaps it
check "its workload was killed through the cgroup" gx host1 "for i in \$(seq 30); do
	kill -0 $pid 2>/dev/null || exit 0
	grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null && exit 0; sleep 0.1; done; exit 1"
is "$(gx host1 'ip netns list | wc -l; find /sys/fs/cgroup/migr -mindepth 1 -type d | wc -l' | tr '\n' ' ')" "0 0 " "nothing left"

# a state file migrd cannot read stops it, and stays as it was
for f in state.json migrations.json; do
	migrd_stop host1
	gx host1 "echo '{\"version\": 1, \"namespaces\": [' > /var/lib/migrd/$f; md5sum /var/lib/migrd/$f > /tmp/$f.md5"
	out=$(gx host1 "$MIGRD -d -f $GSHARE/host1.conf 2>&1; echo rc=\$?")
	like "$out" "rc=[1-9]" "an unreadable $f: migrd does not start"
	like "$out" "cannot read .*/var/lib/migrd/$f" "and says which file it cannot read"
	check "$f is left as it was" gx host1 "md5sum -c /tmp/$f.md5"
	gx host1 "rm -f /var/lib/migrd/$f"
	check "migrd starts once it is moved away" migrd_start host1
done
done_testing
