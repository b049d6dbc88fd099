# SPDX-License-Identifier: ISC
# Sourced by the migration lab tests (07x) after tests/lib.sh and
# lib-migrd.sh: migrd on host1 and host2, a namespace "svc" holding
# streamd, streamc on client, and "migctl migrate" between the hosts.
W=$B/tests/workload
NS=svc
CG=/sys/fs/cgroup/migr/$NS
SVC4=10.77.0.180
SVC6=fd00:77::180
# streamd's ports: 7400 busy both ways, 7401 idle, 7402 the client
# half-closes, 7403 the service half-closes first; SVC_EXTRA: more of
# streamd's options (a listener of a bench's own)
serve_cmd() {
	echo "$W/streamd -r ${1:-20000} -l [::]:7400 -l [::]:7401,rate=0 -l [::]:7402,linger=2 -l [::]:7403,shut=${2:-4} -s /tmp/$NS.stats${SVC_TICK:+ -t $SVC_TICK}${SVC_EXTRA:+ $SVC_EXTRA}"
}

# mig_setup [CONF-LINE...]: both migrds up and peered, no svc anywhere;
# with MIG_FAULTS set, both run with those faults (MIGRD_FAULT)
mig_setup() {
	migrd_cleanup host1 host2
	mig_wipe
	migrd_certs
	migrd_conf host1 host2 -- "$@"
	migrd_conf host2 host1 -- "$@"
	migrd_start host1 ${MIG_FAULTS:+MIGRD_FAULT=$MIG_FAULTS} &&
		migrd_start host2 ${MIG_FAULTS:+MIGRD_FAULT=$MIG_FAULTS} &&
		migrd_peered host1 host2
}

# restart GUEST [FAULT]: migrd again on GUEST, with a fault or none, and
# peered again
restart() {
	migrd_stop "$1" && migrd_start "$1" ${2:+MIGRD_FAULT=$2} && migrd_peered host1 host2
}

# mig_teardown: the trap of every migration test; on a failure the tails
# of both migrd logs go to the test's log first
mig_teardown() {
	if [ "${T_FAIL:-0}" -gt 0 ]; then
		diag "host1 migrd: $(migrd_log host1 | grep -v heartbeat | tail -60)"
		diag "host2 migrd: $(migrd_log host2 | grep -v heartbeat | tail -60)"
	fi
	migrd_cleanup host1 host2
	mig_wipe
}

# mig_wipe: whatever a failed run left of svc on both hosts
mig_wipe() {
	local g
	for g in host1 host2; do
		gx "$g" "echo 1 > $CG/cgroup.kill 2>/dev/null; sleep 0.2; rmdir $CG 2>/dev/null
			ip netns pids $NS 2>/dev/null | xargs -r kill -9; ip netns del $NS 2>/dev/null
			ip link del v$NS 2>/dev/null; pkill -f 'tcpdump -i br0'; true" >/dev/null 2>&1
	done
	gx client "pkill streamc; rm -f /tmp/$NS.*" >/dev/null 2>&1
}

# svc_start GUEST [RATE] [SHUT]: create svc with its addresses and run
# streamd in it through migrd (gated, "run --gate", with SVC_GATE set)
svc_start() {
	mc "$1" "ns create $NS --addr $SVC4/24 --addr $SVC6/64 --mac 52:54:00:77:01:80" >/dev/null &&
	mc "$1" "run $NS ${SVC_GATE:+--gate} -- $(serve_cmd "${2:-20000}" "${3:-4}")" >/dev/null &&
	svc_listening "$1"
}

# svc_listening GUEST [PORT]: $NS on GUEST listens on PORT (streamd's
# last, 7403), within 10 s
svc_listening() {
	gx "$1" "for i in \$(seq 100); do ip netns exec $NS ss -Htln sport = :${2:-7403} | grep -q . && exit 0; sleep 0.1; done; exit 1"
}

# client_start CONNS SECONDS [RATE]: streamc over IPv4 and IPv6, busy,
# idle, half-closed either way; report in /tmp/svc.report on client
client_start() {
	gx client "rm -f /tmp/$NS.report; setsid $W/streamc -c $SVC4:7400 -c '[$SVC6]:7400' \
		-c $SVC4:7401,idle -c '[$SVC6]:7402,halfclose=8' -c $SVC4:7403,peershut \
		-n $1 -r ${3:-20000} -d $2 -p 500 -o /tmp/$NS.report </dev/null >/tmp/$NS.client 2>&1 &"
}

# client_report: wait for streamc to end, print its report
client_report() {
	gx -t 120 client "while pgrep -x streamc >/dev/null; do sleep 0.5; done; cat /tmp/$NS.report"
}

# capture_start / capture_stop: FIN or RST from the service's busy port,
# IPv4 and IPv6 (tcpdump's tcp[] reads IPv4 only: IPv6 by offset, no
# extension header)
# (and, to explain a failed verdict, every RST to or from the service,
# any port, with its time and absolute sequence numbers: /tmp/$NS.rstall,
# and the headers of all the service's packets: /tmp/$NS.pcap, from which
# a failed verdict prints the whole exchange of each connection reset)
capture_start() {
	gx client "setsid tcpdump -i br0 -n -U -s 128 -w /tmp/$NS.pcap 'host $SVC4 or host $SVC6' </dev/null >/dev/null 2>&1 &
		setsid tcpdump -i br0 -n -l '(tcp src port 7400 and (tcp[tcpflags] & (tcp-fin|tcp-rst) != 0)) or (ip6 and ip6[6] = 6 and ip6[40:2] = 7400 and ip6[53] & 5 != 0)' </dev/null >/tmp/$NS.finrst 2>/dev/null &
		setsid tcpdump -i br0 -n -l -tt -S '(host $SVC4 and tcp[tcpflags] & tcp-rst != 0) or (host $SVC6 and ip6[6] = 6 and ip6[53] & 4 != 0)' </dev/null >/tmp/$NS.rstall 2>/dev/null &"
	sleep 1
}
capture_stop() { gx client "pkill -f 'tcpdump -i br0'; sleep 0.3; cat /tmp/$NS.finrst"; }

# migrate FROM TO: "migctl migrate" on FROM; its output in $MOUT, its
# JSON report in $MREP, its exit status in $MRC
migrate() {
	local t0
	t0=$(gx client "date +%s.%N")
	MOUT=$(gx -t "${MIG_TIMEOUT:-180}" "$1" "$MIGCTL migrate $NS $2; echo rc=\$?")
	MOUT="$MOUT
(client clock: migctl migrate $1 -> $2 ran from $t0 to $(gx client "date +%s.%N"))"
	MRC=$(sed -n 's/^rc=//p' <<<"$MOUT")
	MREP=$(gx "$1" "$MIGCTL -j history" | jq -c '[.data.events[] | select(.report)] | last | .report')
}

# svc_rtos GUEST PORT: the RTO (ms) of each of svc's established
# connections on PORT, lowest first (ss leaves "rto:" out when it is 3 s,
# the RTO of a socket without an RTT sample: its info line is there all
# the same)
svc_rtos() {
	gx "$1" "ip netns exec $NS ss -Htin state established sport = :$2" |
		awk '/^[ \t]/ { if (match($0, /rto:[0-9.]+/)) print substr($0, RSTART + 4, RLENGTH - 4); else print 3000 }' |
		sort -n | tr '\n' ' '
}

# rep KEY: a field of the last report (jq path, e.g. .sockets.total)
rep() { jq -r "$1 // empty" <<<"$MREP"; }

# check_client REPORT WHAT: the verdict lines every migration test wants
check_client() {
	diag "client: $1"
	is "$(kv "$1" verdict)" PASS "client: every byte verified $2"
	is "$(kv "$1" resets)" 0 "client: no connection reset $2"
	is "$(kv "$1" mismatches)" 0 "client: no byte lost, duplicated, reordered or changed $2"
	is "$(kv "$1" probes_failed)" 0 "client: every new connection served $2"
	diag "longest stall at the client: $(kv "$1" longest_stall_ms) ms"
	local rsts
	[ "$(kv "$1" verdict)" = PASS ] && return
	rsts=$(gx client "awk '\$3 ~ /^(10\\.77\\.0\\.180|fd00:77::180)\\./' /tmp/$NS.rstall 2>/dev/null | head -40")
	diag "client log: $(gx client "tail -60 /tmp/$NS.client")
RSTs the service sent on the LAN (client clock): $rsts
$(reset_exchanges "$rsts")
ARP and ICMP to or from the service (first 80):
$(gx client "tcpdump -r /tmp/$NS.pcap -n -e -tt 'arp or icmp or icmp6' 2>/dev/null | head -80")"
	diag "receive backlog drops since boot (softnet_stat, second column): $(for g in host1 host2 client; do
		printf '%s %d; ' $g $((16#$(gx $g "awk '{ print \$2 }' /proc/net/softnet_stat | head -1")))
	done)"
	diag "the service's own log (a wrong byte it read resets that connection): host1:
$(gx host1 "tail -30 /var/log/migr/$NS.log 2>/dev/null")
host2:
$(gx host2 "tail -30 /var/log/migr/$NS.log 2>/dev/null")"
}

# reset_exchanges RSTS: for each client port reset (streamc's log) or
# named by the RST lines (at most 8 in all), the packets of that
# connection (its first 8 and last 30 when there are more than 40), with
# the MAC addresses that sent them
reset_exchanges() {
	local ports
	# the client's reset connections first (streamc logs each one's
	# local port), then those the service's RSTs name
	ports=$({ gx client "sed -n 's/.*reset: .* from local port \\([0-9]*\\)$/\\1/p' /tmp/$NS.client" | head -5
		awk '{ n = split($5, a, "."); sub(/:$/, "", a[n]); print a[n] }' <<<"$1"; } | awk '!seen[$0]++' | head -8 | xargs)
	[ -n "$ports" ] || return 0
	gx client "for p in $ports; do
		echo \"exchange of client port \$p:\"
		tcpdump -r /tmp/$NS.pcap -n -e -tt -S \"tcp port \$p\" 2>/dev/null > /tmp/$NS.x
		if [ \$(wc -l < /tmp/$NS.x) -le 40 ]; then cat /tmp/$NS.x; else head -8 /tmp/$NS.x; echo ...; tail -30 /tmp/$NS.x; fi
	done"
}

# wipe_ns NAME...: mig_wipe for namespaces other than $NS
wipe_ns() {
	local n
	for n in "$@"; do
		NS=$n CG=/sys/fs/cgroup/migr/$n mig_wipe
	done
}

# settled: no migration left on either host (each waits at most its
# timeouts: a restarted side's recovery, the other's commit retries, a
# destination discarding what it was sent)
settled() {
	local i g n c
	for i in $(seq 150); do
		n=0
		for g in host1 host2; do
			# a migrd that is still starting answers nothing: not yet
			c=$(gx "$g" "$MIGCTL -j status | jq '.data.migrations | length'")
			case "$c" in
			''|*[!0-9]*) n=$((n + 1)) ;;
			*) n=$((n + c)) ;;
			esac
		done
		[ "$n" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}

# svc_on GUEST: svc runs on GUEST and nowhere else
svc_where() {
	local g out=""
	for g in host1 host2; do
		gx "$g" "[ -e /run/netns/$NS ] && ip netns pids $NS | grep -q ." && out="$out$g "
	done
	echo "${out% }"
}
