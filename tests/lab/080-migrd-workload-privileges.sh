#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# What a workload may do on host1 (issue 12: a program a peer brings
# must not get root here).  As workload-user nobody, the default: its
# uid and gid, no capability in any set, no_new_privs, and in its mount
# namespace migrd's key, control socket, state folder and configuration
# are out of sight (the key reads as empty, the socket refuses, the
# folder is empty); a set-user-ID program gives it nothing.  With
# workload-capabilities cap_net_admin it keeps exactly that one, ambient.
# As root (allowed, warned about) the key and the socket are still
# hidden.  Bad values stop "migrd -n" with the reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1; gx host1 "rm -f /tmp/suid-id"' EXIT
migrd_cleanup host1
migrd_certs
KEY=$GSHARE/certs/host1-key.pem
# what the workload reports about itself, into its log
D=/usr/local/libexec/migr-test
PROBE=$D/probe
cat > "$MSHARE/probe" <<EOS
#!/bin/sh
echo uid=\$(id -u) gid=\$(id -g) groups=\$(id -G | tr ' ' ,)
grep -E '^(CapPrm|CapEff|CapInh|CapAmb|NoNewPrivs):' /proc/self/status | tr -d '\t'
echo key=\$(cat $KEY 2>/dev/null | wc -c)
echo statedir=\$(ls -A /var/lib/migrd 2>/dev/null | wc -l)
echo conf=\$(cat $GSHARE/host1.conf 2>/dev/null | wc -c)
$MIGCTL status >/dev/null 2>&1; echo ctl=\$?
echo suid=\$(/tmp/suid-id -u)
echo done
exec sleep 600
EOS
gx host1 "mkdir -p $D && cp $GSHARE/probe $PROBE && chmod 755 $PROBE"
# a set-user-ID root copy of id(1): no_new_privs must make it useless
gx host1 "cp /usr/bin/id /tmp/suid-id && chmod 4755 /tmp/suid-id"

# probe_as LABEL CONF-LINE...: migrd with those lines, the probe in ns w1,
# its report in $R
probe_as() {
	local label=$1; shift
	migrd_stop host1 >/dev/null
	migrd_conf host1 host2 -- "$@"
	check "$label: migrd starts" migrd_start host1
	mc host1 "ns delete w1" >/dev/null 2>&1
	gx host1 "rm -f /var/lib/migrd/w1.log"
	check "$label: ns w1" mc host1 "ns create w1 --addr 10.77.0.160/24"
	check "$label: the probe runs" mc host1 "run w1 -- $PROBE"
	R=
	for i in $(seq 50); do
		R=$(gx host1 "cat /var/lib/migrd/w1.log 2>/dev/null")
		grep -q '^done' <<<"$R" && break; sleep 0.2
	done
	diag "$R"
}

probe_as "nobody" "workload-user nobody"
is "$(kv "$R" uid) $(kv "$R" gid) $(kv "$R" groups)" "65534 65534 65534" "uid, gid and groups are nobody's, no supplementary group"
for s in CapPrm CapEff CapInh CapAmb; do
	is "$(sed -n "s/^$s://p" <<<"$R")" 0000000000000000 "$s is empty"
done
is "$(sed -n 's/^NoNewPrivs://p' <<<"$R")" 1 "no_new_privs is set"
is "$(kv "$R" suid)" 65534 "a set-user-ID root program still runs as nobody"
is "$(kv "$R" key)" 0 "migrd's key reads as empty in its mount namespace"
is "$(kv "$R" statedir)" 0 "migrd's state folder looks empty"
is "$(kv "$R" conf)" 0 "migrd's configuration reads as empty"
check "the control socket does not answer it" test "$(kv "$R" ctl)" != 0
like "$(gx host1 "head -c 40 $KEY")" "PRIVATE KEY" "(the key is there for migrd itself)"

# a program in a folder closed to nobody: found before exec, named
gx host1 "mkdir -p $D/closed && chmod 700 $D/closed && cp $PROBE $D/closed/probe"
out=$(mc host1 "run w1 -- $D/closed/probe 2>&1; echo rc=\$?")
is "$(sed -n 's/^rc=//p' <<<"$out")" 12 "a program nobody cannot reach: run exits 12"
like "$out" "check the program: Permission denied" "saying the check failed, and why"

probe_as "cap_net_admin" "workload-user nobody" "workload-capabilities cap_net_admin"
is "$(kv "$R" uid)" 65534 "still nobody"
for s in CapPrm CapEff CapInh CapAmb; do
	is "$(sed -n "s/^$s://p" <<<"$R")" 0000000000001000 "$s is cap_net_admin alone"
done
is "$(kv "$R" key)" 0 "the key is still hidden"

probe_as "root" "workload-user root"
is "$(kv "$R" uid)" 0 "workload-user root: uid 0"
like "$(migrd_log host1)" "workloads run as root" "migrd warns about it"
is "$(kv "$R" key) $(kv "$R" statedir)" "0 0" "the key and the state folder are hidden from root too"
check "and the control socket" test "$(kv "$R" ctl)" != 0
mc host1 "ns delete w1" >/dev/null 2>&1

# values migrd refuses, before it starts
for bad in "workload-user nosuchuser:no such user" \
	"workload-capabilities cap_sys_admin:is not one of" \
	"workload-group nosuchgroup:no such group"; do
	migrd_conf host1 host2 -- "${bad%%:*}"
	out=$(gx host1 "$MIGRD -n -f $GSHARE/host1.conf 2>&1; echo rc=\$?")
	is "$(sed -n 's/^rc=//p' <<<"$out")" 1 "migrd -n with '${bad%%:*}' exits 1"
	like "$out" "${bad#*:}" "saying why"
done
done_testing
