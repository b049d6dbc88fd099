#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Benchmark: the socket state engine against the floor of the TCP repair
# API, N = 1, 100, 1000 sockets, idle and with 64 KiB each way
# (tests/bench/engine-floor.c says what each path does).  Runs the
# program in a lab guest when a lab is up (make lab-up, or MIGR_LAB=...),
# or on this machine with --local, as root: it makes a network namespace
# of its own and leaves the host's alone.  Prints a table.
#
#   tests/bench/engine-floor.sh [--local] [--guest GUEST] [-6] [-p PATH]
#       [-q BYTES] [-r RUNS] [N...]
#
# The program is $BUILD/tests/bench/engine-floor (BUILD defaults to
# build/release; 'make bench-engine-floor' builds it, then runs this).
# In the lab the guest finds it at the same path, in the tree the lab was
# booted from.
BUILD=${BUILD:-build/release}
. "$(dirname "$0")/../lib.sh"

bin=$B/tests/bench/engine-floor
where=lab
guest=host1
while [ $# -gt 0 ]; do
	case $1 in
	--local) where=local; shift ;;
	--guest) guest=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ ! -x "$bin" ]; then
	echo "engine-floor.sh: no $bin (make BUILD=$BUILD bench-engine-floor)" >&2
	exit 1
fi
if [ $where = local ]; then
	exec "$bin" "$@"
fi
if ! "$LAB" status >/dev/null 2>&1; then
	echo "engine-floor.sh: no lab up (make lab-up), or --local to run here" >&2
	exit 1
fi
# N = 1000 with 64 KiB each way holds about 133 MiB in TCP buffers, more
# than a 1 GiB guest's tcp_mem allows (the kernel sizes it from memory):
# lift it for the run (pages; the guest is the lab's), then put it back.
gx -t 3600 "$guest" "old=\$(cat /proc/sys/net/ipv4/tcp_mem);
	echo '65536 131072 196608' > /proc/sys/net/ipv4/tcp_mem;
	$bin $*; rc=\$?; echo \"\$old\" > /proc/sys/net/ipv4/tcp_mem; exit \$rc"
