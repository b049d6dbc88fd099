#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: a namespace with N established connections (default 10000)
# moves host1 -> host2 and back.  N idle connections (IPv4 and IPv6) and
# 8 busy ones, every byte of which is verified, from the client guest;
# migrd, streamd and streamc run with 65,536 open files.  Needs a lab
# that is up (make lab-up).  Prints a table of each move (sockets, bytes
# of records as JSON and on the channel, per socket, the phases) and the
# clients' verdicts, and writes them as JSON to $BUILD/bench/scale.json.
# Exits 1 if a move failed or a client saw a reset or a wrong byte;
# asserts no time.
#
#   tests/bench/scale.sh [N]
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lab/lib-migrd.sh"
. "$(dirname "$0")/../lab/lib-migrate.sh"
trap mig_teardown EXIT
N=${1:-10000}
export LAB_NOFILE=65536
MIG_TIMEOUT=${MIG_TIMEOUT:-900}
out=$top/$BUILD/bench
mkdir -p "$out"

mig_setup "commit-timeout 10000" "migrate-timeout 600" >/dev/null ||
	{ echo "scale: migrd setup failed" >&2; exit 1; }
svc_start host1 2000 >/dev/null || { echo "scale: svc did not start" >&2; exit 1; }
t0=$(date +%s)
gx client "ulimit -n 65536; rm -f /tmp/$NS.idle /tmp/$NS.busy
	setsid $W/streamc -c $SVC4:7401,idle -c '[$SVC6]:7401,idle' -n $N -d 0 -o /tmp/$NS.idle </dev/null >/tmp/$NS.idle.log 2>&1 &
	setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' -n 8 -r 2000 -d 0 -o /tmp/$NS.busy </dev/null >/tmp/$NS.busy.log 2>&1 &"
# every connection established in svc (listeners aside)
est=0
for i in $(seq 600); do
	est=$(gx host1 "ip netns exec $NS ss -Htn state established | wc -l")
	[ "${est:-0}" -ge $((N + 8)) ] && break
	sleep 1
done
echo "# $est connections established in $(( $(date +%s) - t0 )) s"
[ "${est:-0}" -ge $((N + 8)) ] || { echo "scale: only $est of $((N + 8)) connections came up" >&2; exit 1; }
sleep 5

moves=() rc=0
move() {	# FROM TO
	local n st en q per
	migrate "$1" "$2"
	echo "$MOUT" | sed 's/^/# /'
	n=$(rep .sockets.total) st=$(rep .bytes.streamed) en=$(rep .bytes.encoded) q=$(rep .bytes.queued)
	per=$(( (${st:-0} - ${q:-0}) / ${n:-1} ))
	printf '| %s → %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" \
		"${MRC:--}" "${n:--}" "${en:--}" "${st:--}" "$per" \
		"$(rep .ms.freeze)" "$(rep .ms.dump)" "$(rep .ms.transfer)" "$(rep .ms.restore)" \
		"$(rep .ms.commit)" "$(rep .ms.downtime)" "$(rep .ms.total)"
	moves+=("$(jq -c --arg from "$1" --arg to "$2" --argjson rc "${MRC:-1}" \
		'{from: $from, to: $to, rc: $rc, sockets, bytes, ms}' <<<"$MREP")")
	[ "$MRC" = 0 ] || rc=1
}
echo "| move | exit | sockets | JSON bytes | on the channel | per socket | freeze | dump | transfer | restore | commit | downtime ms | total ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
move host1 host2
sleep 10
move host2 host1
sleep 10
r=$(gx -t 120 client "pkill -TERM -x streamc; for i in \$(seq 300); do pgrep -x streamc >/dev/null || break; sleep 0.2; done
	cat /tmp/$NS.idle; cat /tmp/$NS.busy")
idle=$(sed -n 1p <<<"$r") busy=$(sed -n 2p <<<"$r")
echo "# idle: $idle"
echo "# busy: $busy"
for c in "$idle" "$busy"; do
	[ "$(kv "$c" resets)" = 0 ] && [ "$(kv "$c" mismatches)" = 0 ] || rc=1
done
[ "$(kv "$busy" verdict)" = PASS ] || rc=1
printf '%s\n' "${moves[@]}" | jq -s --argjson n "$N" --arg idle "$idle" --arg busy "$busy" \
	'{connections: $n, moves: ., idle: $idle, busy: $busy}' > "$out/scale.json"
echo "# $out/scale.json"
exit $rc
