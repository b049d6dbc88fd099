#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: CRIU's own downtime for the kind of namespace migr moves,
# in the same lab guest: streamd holding N idle connections (IPv4, from
# the client guest), frozen by `criu dump --tcp-established` and brought
# back in place by `criu restore --tcp-established` (images on a tmpfs,
# no transfer: the least CRIU's path costs).  The network namespace is
# external to CRIU, as migrd keeps it.  For each N (default 1 100 1000)
# it prints dump, restore and their sum in ms, the images' bytes, and
# the client's verdict (no reset, no wrong byte after the restore), and
# writes them as JSON to $BUILD/bench/criu.json.  Needs a lab that is up
# and a build without sanitizers ($PLAIN_BUILD, default build/release).
#
#   tests/bench/criu.sh [N...]
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-criu.sh"

# streamd and streamc without the sanitizers: CRIU cannot dump a process
# with ASan's terabytes of shadow mappings (its pagemap cache asks for
# 30 GB)
W=$top/${PLAIN_BUILD:-build/release}/tests/workload
CG=/sys/fs/cgroup/cb
IMG=/run/cb.img
ADDR=10.77.0.195
out=$top/$BUILD/bench
mkdir -p "$out"
cleanup() {
	gx host1 "echo 1 > $CG/cgroup.kill 2>/dev/null
		for i in \$(seq 50); do grep -qs 'populated 1' $CG/cgroup.events || break; sleep 0.1; done
		rmdir $CG 2>/dev/null; ip netns del cb 2>/dev/null; ip link del vcb 2>/dev/null
		umount $IMG 2>/dev/null; rm -rf $IMG" >/dev/null 2>&1
	gx client "pkill -x streamc" >/dev/null 2>&1
}
trap cleanup EXIT
[ $# -gt 0 ] || set -- 1 100 1000

printf '| N | dump ms | restore ms | CRIU total ms | images bytes | client |\n'
printf '| --- | --- | --- | --- | --- | --- |\n'
rows=()
for n in "$@"; do
	cleanup
	service_ns host1 cb $ADDR/24 fd00:77::195/64 52:54:00:77:01:95 >/dev/null ||
		{ echo "criu.sh: no namespace" >&2; exit 1; }
	gx host1 "mkdir $CG && setsid sh -c 'echo \$\$ > $CG/cgroup.procs; ulimit -n 65536;
		exec nsenter --net=/run/netns/cb $W/streamd -l 0.0.0.0:7401,rate=0' </dev/null >/dev/null 2>&1 &
		for i in \$(seq 50); do ip netns exec cb ss -Htln sport = :7401 | grep -q . && exit 0; sleep 0.1; done; exit 1" ||
		{ echo "criu.sh: streamd did not start" >&2; exit 1; }
	gx client "ulimit -n 65536; rm -f /tmp/cb.report; setsid $W/streamc -c $ADDR:7401,idle -n $n -d 0 -o /tmp/cb.report </dev/null >/tmp/cb.log 2>&1 &"
	for i in $(seq 300); do
		est=$(gx host1 "ip netns exec cb ss -Htn state established | wc -l")
		[ "${est:-0}" -ge "$n" ] && break
		sleep 1
	done
	pid=$(gx host1 "cat $CG/cgroup.procs | head -1")
	if ! r=$(criu_in_place host1 "$pid" cb $IMG); then
		echo "criu.sh: N=$n: CRIU failed" >&2
		exit 1
	fi
	read -r dump restore bytes <<<"$r"
	sleep 2
	gx client "pkill -TERM -x streamc; for i in \$(seq 50); do pgrep -x streamc >/dev/null || break; sleep 0.2; done"
	rep=$(gx client "cat /tmp/cb.report")
	verdict=$(kv "$rep" verdict)
	[ "$(kv "$rep" resets)" = 0 ] || verdict="$verdict, resets $(kv "$rep" resets)"
	printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$dump" "$restore" $((dump + restore)) "$bytes" "$verdict"
	rows+=("$(jq -nc --argjson n "$n" --argjson dump "$dump" --argjson restore "$restore" \
		--argjson bytes "$bytes" --arg client "$verdict" \
		'{n: $n, dump_ms: $dump, restore_ms: $restore, total_ms: ($dump + $restore), images_bytes: $bytes, client: $client}')")
done
printf '%s\n' "${rows[@]}" | jq -s '{bench: "criu", rows: .}' > "$out/criu.json"
echo "# $out/criu.json"
