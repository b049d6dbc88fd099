#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# migrd's configuration check and control socket on host1: "-n" reports
# errors as file:line, the socket is 0660 root-only, a non-root caller is
# refused (by the file mode, and by SO_PEERCRED when the mode is opened),
# results carry codes that become migctl's exit status, -j is JSON, bad
# frames get a result and do not hurt the daemon, a second migrd on
# the same socket refuses to start, and admin-group membership is the
# calling process's own.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"

trap 'migrd_cleanup host1' EXIT
migrd_cleanup host1
migrd_certs

# configuration check
printf 'hostname host1\nlisten 10.77.0.1 port 99999\npeer host2 nowhere\nbogus 1\n' \
	> "$MSHARE/bad.conf"
out=$(gx host1 "$MIGRD -n -f $GSHARE/bad.conf 2>&1"); rc=$?
is "$rc" 1 "migrd -n exits 1 on a bad config"
like "$out" "bad.conf:2: listen: 99999 is out of range 1-65535" "-n names line 2"
like "$out" "bad.conf:3: peer host2: 'nowhere' is not a numeric" "-n names line 3"
like "$out" "bad.conf:4: unknown keyword 'bogus'" "-n names line 4"
like "$out" "3 errors" "-n counts the errors"
migrd_conf host1 host2
check "migrd -n accepts the lab config" gx host1 "$MIGRD -n -f $GSHARE/host1.conf"

check "migrd starts on host1" migrd_start host1
is "$(gx host1 'stat -c %a:%U:%G /run/migrd/migrd.sock')" "660:root:root" \
	"control socket is 0660 root:root"

out=$(mc host1 status); rc=$?
is "$rc" 0 "migctl status exits 0"
like "$out" "^host: host1$" "status names the host"
like "$out" "^protocol: $PV\$" "status gives the protocol version"
like "$out" "^capabilities: .*cap_net_admin" "capabilities were reduced and include cap_net_admin"
# kept: dac_override kill setgid setuid net_bind_service net_admin net_raw sys_ptrace sys_admin
capeff=$(gx host1 "awk '/^CapEff/ { print \$2 }' /proc/\$(cat /run/migrd/test.pid)/status")
capbnd=$(gx host1 "awk '/^CapBnd/ { print \$2 }' /proc/\$(cat /run/migrd/test.pid)/status")
capprm=$(gx host1 "awk '/^CapPrm/ { print \$2 }' /proc/\$(cat /run/migrd/test.pid)/status")
is "$capeff" 00000000002834e2 "effective capabilities are the documented set"
# and what criu needs for checkpoint mode, permitted and bounding, never
# effective (migrd/caps.c): chown dac_read_search fowner fsetid setpcap
# ipc_lock ipc_owner sys_chroot sys_nice sys_resource sys_time mknod
# lease audit_control checkpoint_restore
is "$capbnd" 000001005bacf5ff "bounding set is the documented set, with criu's"
is "$capprm" 000001005bacf5ff "permitted set is the same"

is "$(mc host1 -j status | jq -r '.code, .result, .data.host' | tr '\n' ' ')" \
	"0 ok host1 " "-j status is JSON with code, result, data"
is "$(mc host1 -j peers | jq -r '.data.peers[0].name')" host2 "-j peers lists host2"

# abbreviations and the table-driven parser
like "$(mc host1 st)" "^host: host1$" "'st' abbreviates status"
like "$(mc host1 ns l)" "^NAMESPACE" "'ns l' abbreviates ns list"
mc host1 nonsense >/dev/null 2>&1; is "$?" 2 "unknown command: exit 2"
out=$(mc host1 ns create 'bad!' --addr 10.77.0.100/24 2>&1); rc=$?
is "$rc" 7 "invalid namespace name: exit 7 (invalid argument)"
like "$out" "only letters, digits" "the message says why"
out=$(mc host1 migrate nosuch host2 2>&1); rc=$?
is "$rc" 8 "migrate of an unknown namespace: exit 8"
like "$(mc host1 --help)" "migrate NS HOST" "--help lists migrate"

# non-root callers
out=$(gx host1 "setpriv --reuid=nobody --regid=nogroup --clear-groups $MIGCTL status 2>&1"); rc=$?
is "$rc" 3 "nobody is refused (exit 3)"
like "$out" "Permission denied" "by the socket's mode"
out=$(gx host1 "chmod 0666 /run/migrd/migrd.sock; setpriv --reuid=nobody --regid=nogroup --clear-groups $MIGCTL status 2>&1; echo rc=\$?; chmod 0660 /run/migrd/migrd.sock")
like "$out" "rc=3" "with the mode opened, SO_PEERCRED still refuses nobody (exit 3)"
like "$out" "uid 65534 is neither root nor in the admin group" "and says why"
like "$(migrd_log host1)" "control: refused pid [0-9]+ uid 65534" "the refusal is logged"

# bad frames on the control socket
mkdir -p "$MSHARE/frames"
frame 4 $PV 'nope!' > "$MSHARE/frames/ctl-malformed"
frame_hdr 4 $PV 2147483647 > "$MSHARE/frames/ctl-oversize"
frame 4 7 '{}' > "$MSHARE/frames/ctl-version"
frame 2 $PV '{}' > "$MSHARE/frames/ctl-peertype"
for f in malformed:2 oversize:6 version:5 peertype:4; do
	out=$(gx host1 "socat -t3 - UNIX-CONNECT:/run/migrd/migrd.sock < $GSHARE/frames/ctl-${f%:*} | tail -c +9")
	is "$(jq -r .code <<<"$out" 2>/dev/null)" "${f#*:}" "control: ${f%:*} frame gets result code ${f#*:}"
done
like "$(migrd_log host1)" "request of 2147483647 bytes is above max-message" "oversize request logged"
check "migrd still answers after bad frames" mc host1 status
check "migrd is the same process" gx host1 'kill -0 $(cat /run/migrd/test.pid)'

# a second daemon on the same socket
out=$(gx host1 "$MIGRD -d -f $GSHARE/host1.conf 2>&1"); rc=$?
isnt_zero=$([ "$rc" -ne 0 ] && echo yes || echo no)
is "$isnt_zero" yes "a second migrd refuses to start"
like "$out" "another migrd answers on /run/migrd/migrd.sock" "because the first one answers"
check "and the first still answers" mc host1 status

# a stale socket (no one listening) is replaced
migrd_stop host1
gx host1 'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"/run/migrd/migrd.sock\")"'
check "migrd starts over a stale socket" migrd_start host1
like "$(migrd_log host1)" "removed stale control socket" "the stale socket was removed"

# admin-group: membership is the caller's own groups (SO_PEERGROUPS), as
# the kernel has them, not what /etc/group says
migrd_stop host1
# setgroup MEMBERS: the group migr (gid 4242) in /etc/group, with MEMBERS
setgroup() {
	gx host1 "grep -v '^migr:' /etc/group > /etc/group.t; echo 'migr:x:4242:$1' >> /etc/group.t; cat /etc/group.t > /etc/group; rm /etc/group.t"
}
setgroup ""
migrd_conf host1 host2 -- "admin-group migr"
check "migrd starts with admin-group migr" migrd_start host1
is "$(gx host1 'stat -c %a:%U:%G /run/migrd/migrd.sock')" "660:root:migr" \
	"control socket is 0660 root:migr"
asuser() { gx host1 "setpriv --reuid=nobody $1 $MIGCTL status >/dev/null 2>&1; echo \$?"; }
is "$(asuser '--regid=4242 --clear-groups')" 0 "primary group migr: served"
is "$(asuser '--regid=nogroup --groups=4242')" 0 "migr among the process's groups (not listed for it in /etc/group): served"
setgroup nobody
is "$(asuser '--regid=nogroup --clear-groups')" 3 "listed in /etc/group but not among the process's groups: refused (exit 3)"
migrd_stop host1
gx host1 "grep -v '^migr:' /etc/group > /etc/group.t; cat /etc/group.t > /etc/group; rm /etc/group.t"
done_testing
