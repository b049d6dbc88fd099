#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: checkpoint mode's downtime against the memory of the program
# (issue 13).  For each size (MiB, default 10 100 500) a program whose
# whole state is its memory (tests/workload/memhog.py: incompressible
# pages, written on at WRATE MiB/s, default 1, as a program at work
# dirties its memory) is moved host1 -> host2 by migrd in checkpoint
# mode, once without memory pre-copy (checkpoint-precopy 0: the whole
# memory is dumped, sent and restored inside the downtime) and once with
# it (checkpoint-precopy 4), and, beside them, dumped and restored in
# place on host1 by CRIU alone (criu dump and criu restore on a tmpfs,
# no transfer, its network namespace external as migrd keeps it): the
# least CRIU's own path costs.  After each, the program must answer that
# every page is what its writes made it.  Prints a table (ms; bytes) and
# writes it as JSON to $BUILD/bench/ckpt-mem.json.  Exits 1 if a move or a
# check failed; asserts no time.
#
# Needs a lab that is up with room for the program and its images twice
# (the guests' root is a tmpfs): LAB_MEM=3072 make lab-up.
#
#   tests/bench/ckpt-mem.sh [MIB...]
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lab/lib-migrd.sh"
. "$(dirname "$0")/../lab/lib-migrate.sh"
. "$(dirname "$0")/lib-criu.sh"
NS=ckmem
CG=/sys/fs/cgroup/migr/$NS
SVC4=10.77.0.190
PORT=7600
MH=$top/tests/workload/memhog.py
WRATE=${WRATE:-1}
MIG_TIMEOUT=${MIG_TIMEOUT:-1800}
# CRIU alone
ACG=/sys/fs/cgroup/cm
AIMG=/run/cm.img
A4=10.77.0.191
out=$top/$BUILD/bench
mkdir -p "$out"

alone_cleanup() {
	gx host1 "echo 1 > $ACG/cgroup.kill 2>/dev/null
		for i in \$(seq 50); do grep -qs 'populated 1' $ACG/cgroup.events || break; sleep 0.1; done
		rmdir $ACG 2>/dev/null; ip netns del cm 2>/dev/null; ip link del vcm 2>/dev/null
		umount $AIMG 2>/dev/null; rm -rf $AIMG" >/dev/null 2>&1
}
cleanup() {
	alone_cleanup
	mig_teardown
}
trap cleanup EXIT

# probe ADDR: memhog's answer, from the client guest
probe() {
	gx client "python3 -c \"import socket; print(socket.create_connection(('$1', $PORT), timeout=600).makefile().readline().strip())\""
}
# wait_ok ADDR: until memhog answers (it fills its memory first)
wait_ok() {
	local i r
	for i in $(seq 600); do
		r=$(probe "$1" 2>/dev/null)
		case "$r" in ok*) echo "$r"; return 0 ;; bad*) echo "$r"; return 1 ;; esac
		sleep 1
	done
	return 1
}

# alone MIB: CRIU's dump and restore in place; "dump restore bytes verdict"
alone() {
	local r pid
	alone_cleanup
	service_ns host1 cm $A4/24 fd00:77::191/64 52:54:00:77:01:91 >/dev/null || return 1
	gx host1 "mkdir $ACG && setsid sh -c 'echo \$\$ > $ACG/cgroup.procs;
		exec nsenter --net=/run/netns/cm python3 $MH -m $1 -w $WRATE -p $PORT' </dev/null >/dev/null 2>&1 &" || return 1
	wait_ok $A4 >/dev/null || return 1
	pid=$(gx host1 "head -1 $ACG/cgroup.procs")
	if ! r=$(criu_in_place host1 "$pid" cm $AIMG); then
		echo "ckpt-mem: CRIU alone, $1 MiB: CRIU failed" >&2
		return 1
	fi
	echo "$r $(probe $A4 | cut -d' ' -f1)"
	alone_cleanup
}

# moved MIB PASSES: migrd moves memhog host1 -> host2; its report in MREP
moved() {
	local g p
	MRC= MREP=
	migrd_cleanup host1 host2
	mig_wipe
	for g in host1:host2 host2:host1; do
		p=${g#*:} g=${g%:*}
		ckpt_conf "$g" "$p" 8192 -- "migrate-timeout 900" "commit-timeout 10000" \
			"checkpoint-precopy $2" >/dev/null
	done
	migrd_start host1 >/dev/null && migrd_start host2 >/dev/null && migrd_peered host1 host2 >/dev/null || return 1
	mc host1 "ns create $NS --addr $SVC4/24 --mac 52:54:00:77:01:90" >/dev/null &&
		mc host1 "run $NS --checkpoint -- /usr/bin/python3 $MH -m $1 -w $WRATE -p $PORT" >/dev/null || return 1
	wait_ok $SVC4 >/dev/null || return 1
	sleep 2
	migrate host1 host2
	echo "$MOUT" | sed 's/^/# /' >&2
	[ "$MRC" = 0 ]
}

printf '| MiB | path | passes (memory MiB each) | dump memory MiB | CRIU dump ms | restore ms | downtime ms | total ms | check |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
rows=() rc=0
[ $# -gt 0 ] || set -- 10 100 500
migrd_certs >/dev/null
for mib in "$@"; do
	if r=$(alone "$mib"); then
		read -r d rs b v <<<"$r"
		printf '| %s | CRIU alone, in place | - | %s | %s | %s | %s | %s | %s |\n' "$mib" $((b >> 20)) "$d" "$rs" $((d + rs)) $((d + rs)) "$v"
		rows+=("$(jq -nc --argjson mib "$mib" --argjson d "$d" --argjson r "$rs" --argjson b "$b" --arg v "$v" \
			'{mib: $mib, path: "criu", dump_ms: $d, restore_ms: $r, downtime_ms: ($d + $r), images_bytes: $b, check: $v}')")
		[ "$v" = ok ] || rc=1
	else
		printf '| %s | CRIU alone, in place | failed | | | | | | |\n' "$mib"
		rc=1
	fi
	for passes in 0 4; do
		if moved "$mib" "$passes"; then
			v=$(probe $SVC4 | cut -d' ' -f1)
		else
			v="move failed ($MRC)"
			rc=1
		fi
		[ "$v" = ok ] || rc=1
		pc=$(jq -r '[.checkpoint.precopy[]? | (.memory / 1048576 | floor | tostring)] | join(", ")' <<<"$MREP")
		printf '| %s | migrd, checkpoint-precopy %s | %s | %s | %s | %s | %s | %s | %s |\n' "$mib" "$passes" \
			"$(jq -r '.checkpoint.precopy | length' <<<"$MREP")${pc:+ ($pc)}" \
			"$(jq -r '(.checkpoint.memory // 0) / 1048576 | floor' <<<"$MREP")" \
			"$(rep .checkpoint.dump_ms)" "$(rep .ms.restore)" "$(rep .ms.downtime)" "$(rep .ms.total)" "$v"
		rows+=("$(jq -c --argjson mib "$mib" --argjson passes "$passes" --arg v "$v" \
			'{mib: $mib, path: "migrd", precopy: $passes, checkpoint, ms, check: $v}' <<<"${MREP:-{\}}")")
		mig_wipe
	done
done
printf '%s\n' "${rows[@]}" | jq -s "{bench: \"ckpt-mem\", wrate_mib_s: $WRATE, rows: .}" > "$out/ckpt-mem.json"
echo "# $out/ckpt-mem.json"
exit $rc
