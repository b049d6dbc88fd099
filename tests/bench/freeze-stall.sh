#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: the stall a TCP peer sees for a given freeze-and-lock time.
# Freezes and locks a live streamd for each duration and prints the
# longest wait between two reads on the client's connections.  Needs a
# lab that is up (make lab-up, or MIGR_LAB=...).  Prints a table.
#
#   tests/bench/freeze-stall.sh [HOLD_MS...]     (default 0 200 500 1000 2000)
. "$(dirname "$0")/../lib.sh"

W=$B/tests/workload
M=$B/tests/tools/nsmech
CG=/sys/fs/cgroup/bench
durations=("$@")
[ ${#durations[@]} -gt 0 ] || durations=(0 200 500 1000 2000)

cleanup() {
	gx host1 "echo 1 > $CG/cgroup.kill; sleep 0.3; rmdir $CG" >/dev/null 2>&1
	service_ns_del host1 bn
}
trap cleanup EXIT
cleanup
service_ns host1 bn 10.77.0.170/24 fd00:77::170/64 52:54:00:77:01:70 || exit 1
gx host1 "mkdir $CG; setsid sh -c 'echo \$\$ > $CG/cgroup.procs; exec ip netns exec bn $W/streamd -l [::]:7300 -r 20000' </dev/null >/dev/null 2>&1 &
	sleep 1"

printf '%-8s %-10s %-10s %-8s %-10s %-14s %-8s %s\n' hold_ms window_ms freeze_ms lock_ms unlock_ms peer_stall_ms verdict bytes_verified
for d in "${durations[@]}"; do
	gx client "rm -f /tmp/bench.report; setsid $W/streamc -c 10.77.0.170:7300 -n 8 -r 20000 -d 12 -o /tmp/bench.report </dev/null >/dev/null 2>&1 &"
	sleep 4
	# freeze, lock, hold, unlock, thaw in one process, timed there
	h=$(gx host1 "$M hold $CG bn $d")
	r=$(gx -t 30 client "while pgrep -x streamc >/dev/null; do sleep 0.2; done; cat /tmp/bench.report")
	printf '%-8s %-10s %-10s %-8s %-10s %-14s %-8s %s\n' "$d" "$(kv "$h" window_ms)" \
		"$(kv "$h" freeze_ms)" "$(kv "$h" lock_ms)" "$(kv "$h" unlock_thaw_ms)" \
		"$(kv "$r" longest_stall_ms)" "$(kv "$r" verdict)" "$(kv "$r" rx_bytes)"
done
