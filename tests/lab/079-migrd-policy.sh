#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A peer gets only what local policy allows.  host2 lets host1 bring
# namespaces called svc, with addresses in 10.77.0.128/25 and
# fd00:77::/64, MACs 52:54:00:77:01:*, and the programs of one folder,
# $D: a start script for streamd, as migrd.conf(5) advises.  From
# host1, each of these is refused by host2 before anything is frozen or
# built there, by name (migctl check and migctl migrate exit 15), and
# leaves the namespace serving on host1: a namespace called web, an
# address outside the prefix (10.77.0.3, a LAN host's), a MAC
# outside the prefix, a workload outside the folder (/bin/sleep), and a
# symbolic link to /bin/sh inside it.  svc with streamd's script inside
# the policy then moves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
D=/usr/local/libexec/migr-test
trap 'for g in host1 host2; do gx $g "rm -rf $D"; done; ns_gone web; mig_teardown' EXIT

rc_of() { gx -t 90 "$1" "$2 2>&1; echo rc=\$?"; }
rc() { sed -n 's/^rc=//p' <<<"$1"; }
ns_gone() { gx host1 "$MIGCTL ns delete $1" >/dev/null 2>&1; true; }
# refused NS WHAT PATTERN: check and migrate refused by host2, nothing
# changed on either host
refused() {
	local out
	out=$(rc_of host1 "$MIGCTL check $1 host2")
	is "$(rc "$out")" 15 "$2: check exits 15"
	like "$out" "$3" "$2: check names it"
	out=$(rc_of host1 "$MIGCTL migrate $1 host2")
	is "$(rc "$out")" 15 "$2: migrate exits 15 (refused)"
	like "$out" "$3" "$2: migrate names it"
	is "$(gx host1 "[ -e /run/netns/$1 ] && echo here; cat /sys/fs/cgroup/migr/$1/cgroup.freeze 2>/dev/null || echo 0")" "here
0" "$2: $1 still on host1, not frozen"
	is "$(gx host2 "ls /run/netns/$1 2>/dev/null; ip -br link | grep -c '^v$1'")" 0 \
		"$2: host2 built nothing"
}

migrd_cleanup host1 host2
mig_wipe
migrd_certs
# the same folder on both hosts: a start script, and a link out of it
for g in host1 host2; do
	gx $g "mkdir -p $D && printf '#!/bin/sh\nexec $W/streamd \"\$@\"\n' > $D/streamd &&
		chmod 755 $D/streamd && ln -sf /bin/sh $D/sh"
done
migrd_conf host1 host2
migrd_conf host2 host1 -- "allow host1 program $D/" \
	"allow host1 address 10.77.0.128/25 fd00:77::/64" \
	"allow host1 mac 52:54:00:77:01" "allow host1 namespace $NS"
check "migrd on host1 and host2, peered" eval 'migrd_start host1 && migrd_start host2 && migrd_peered host1 host2'

check "web created on host1" mc host1 "ns create web --addr 10.77.0.181/24 --mac 52:54:00:77:01:81"
refused web "a name outside the policy" "host1 may not bring namespace web here \(no 'allow host1 namespace' covers it\)"
ns_gone web

check "svc with an address outside the prefix" mc host1 "ns create $NS --addr 10.77.0.3/24 --mac 52:54:00:77:01:80"
refused $NS "an address outside the prefix" "host1 may not bring address 10.77.0.3/24 here"
ns_gone $NS

check "svc with a MAC outside the prefix" mc host1 "ns create $NS --addr $SVC4/24 --mac 52:54:00:77:02:80"
refused $NS "a MAC outside the prefix" "host1 may not bring MAC 52:54:00:77:02:80 here"
ns_gone $NS

check "svc running /bin/sleep" eval "mc host1 'ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80' && mc host1 'run $NS -- /bin/sleep 600'"
refused $NS "a program the policy does not name" "host1 may not bring program /bin/sleep here"
is "$(gx host1 "ip netns pids $NS | wc -l")" 1 "sleep still runs in svc on host1"
ns_gone $NS

check "svc running a link to /bin/sh in the allowed folder" eval "mc host1 'ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80' && mc host1 'run $NS -- $D/sh -c \"sleep 600\"'"
refused $NS "a link out of the allowed folder" "host1 may not bring program $D/sh here"
ns_gone $NS

check "svc running streamd's start script, inside the policy" eval "mc host1 'ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80' &&
	mc host1 'run $NS -- $(serve_cmd | sed "s|$W/streamd|$D/streamd|")' && svc_listening host1"
out=$(rc_of host1 "$MIGCTL check $NS host2")
is "$(rc "$out")" 0 "check exits 0"
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migrate svc host2 exits 0"
is "$(svc_where)" host2 "svc runs on host2 only"
is "$(migrd_log host1 | grep -c "no 'allow' statement")" 0 "no warning from migrd whose peer has a policy"
printf 'hostname host1\npeer host2 10.77.0.2\n' > "$MSHARE/nopolicy.conf"
like "$(gx host1 "$MIGRD -n -f $GSHARE/nopolicy.conf 2>&1")" "peer host2: no 'allow' statement: it can move nothing here" \
	"a peer without a policy: migrd -n warns"
done_testing
