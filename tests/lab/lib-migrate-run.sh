# SPDX-License-Identifier: ISC
# Sourced by 071/072/073 with CONNS, RATE and SECS set: one migration of
# svc host1 -> host2 under live traffic through "migctl migrate", every
# check on the outcome, then the move back to host1.
trap mig_teardown EXIT
# commit-timeout 3 s: under persist-emfile (071) each of the destination's
# writes takes every descriptor first, and going live once took over 1 s,
# so the move back was reported in doubt (17) before COMMITTED came
check "migrd on host1 and host2, peered" mig_setup "commit-timeout 3000"
check "svc created and serving on host1 through migrd" svc_start host1 "$RATE"
# the capture first: a reset while the client connects counts as much
capture_start
client_start "$CONNS" "$SECS" "$RATE"
sleep "${WARM:-5}"

# --- host1 -> host2
migrate host1 host2
diag "$MOUT"
is "$MRC" 0 "migctl migrate $NS host2 exits 0"
like "$MOUT" 'prepared .*locked and detached' "it printed the pre-copy phase"
like "$MOUT" 'freeze .*traffic locked .*tasks frozen' "it printed the freeze"
like "$MOUT" 'ready .*restored' "it printed the restore"
like "$MOUT" 'downtime' "it printed the figures table"
is "$(rep .outcome)" moved "history keeps the report: moved"
n=$(rep .sockets.total)
if [ "${n:-0}" -ge "$MIN_SOCKETS" ]; then pass "$n sockets moved (at least $MIN_SOCKETS)"; else fail "${n:-0} sockets moved, expected at least $MIN_SOCKETS"; fi
is "$(rep .sockets.tcp_listen)" 4 "the 4 listeners moved"
q=$(rep .bytes.queued)
diag "queued bytes moved: $q; phases: $(jq -c .ms <<<"$MREP")"
# the channel is compressed: records repeat each other's text; what the
# queues held (random bytes, base64 in the JSON) shrinks back to about
# its own size, the rest of a record to well under 400 bytes
st=$(rep .bytes.streamed) en=$(rep .bytes.encoded)
per=$(( (${st:-0} - ${q:-0}) / ${n:-1} ))
diag "records: $en bytes of JSON, $st on the channel: $per bytes a socket beside the $q queued"
if [ "${st:-0}" -gt 0 ] && [ "${en:-0}" -gt "${st:-0}" ]; then pass "records were compressed ($en bytes of JSON, $st on the channel)"; else fail "records not compressed: $en bytes of JSON, $st on the channel"; fi
if [ "$per" -le 400 ]; then pass "at most 400 bytes a socket on the channel beside its queued data ($per)"; else fail "$per bytes a socket on the channel beside its queued data, more than 400"; fi
like "$(rep .ms.downtime)" '^[0-9.]+$' "the report has the downtime"
is "$(svc_where)" host2 "svc runs on host2 only"
is "$(gx host1 "$MIGCTL -j ns list | jq -r '.data.namespaces[].name'; ls /run/netns; ls -d $CG 2>/dev/null")" "" \
	"host1 kept no namespace, netns or cgroup of svc"
is "$(gx host2 "$MIGCTL -j ns list | jq -r '.data.namespaces[].name'")" "$NS" "host2's migrd manages svc now"
check "streamd on host2 listens in svc" svc_listening host2

# --- host2 -> host1 while the same client runs on
sleep 3
migrate host2 host1
diag "$MOUT"
is "$MRC" 0 "migctl migrate $NS host1 (back) exits 0"
is "$(svc_where)" host1 "svc runs on host1 again, only there"
r=$(client_report)
check_client "$r" "across both moves"
is "$(kv "$r" closes_pending)" 0 "client: every half-close completed"
finrst=$(capture_stop)
is "$(grep -c . <<<"$finrst")" 0 "no FIN or RST from the service's busy port on the LAN"
[ -z "$finrst" ] || diag "$finrst"
r=$(gx -t 30 client "$W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' -n 2 -r 20000 -d 3")
rx=$(kv "$r" rx_bytes)
# streamd writes RATE bytes/s on each: 2 connections for 3 s, half of it at least
if [ "${rx:-0}" -ge $((RATE * 3)) ]; then pass "new connections are served on host1 afterwards ($rx bytes in 3 s)"; else fail "new connections got ${rx:-0} bytes in 3 s"; fi
# each source said FORGET once it knew: no committed id left on either
is "$(gx host1 "jq -c .committed /var/lib/migrd/migrations.json"; gx host2 "jq -c .committed /var/lib/migrd/migrations.json")" "[]
[]" "both committed lists are empty: each source acknowledged (FORGET)"
if [ -n "${MIG_FAULTS:-}" ]; then
	for g in host1 host2; do
		like "$(migrd_log $g | grep -c "fault injected: ${MIG_FAULTS%%,*}")" '^[1-9]' \
			"$g's migrd went through fault ${MIG_FAULTS%%,*}"
	done
fi
if [[ ,${MIG_FAULTS:-}, == *,fds-high,* ]]; then
	for g in host1 host2; do
		top=$(gx "$g" 'ls /proc/$(cat /run/migrd/test.pid)/fd | sort -n | tail -1')
		if [ "${top:-0}" -gt 1024 ]; then pass "$g's migrd moved svc with descriptors up to $top"; else fail "$g's migrd: highest descriptor ${top:-none}, not above 1024"; fi
	done
fi
done_testing
