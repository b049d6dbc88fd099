#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Run one fuzz target over a working copy of its seed corpus
# (tests/fuzz/corpus/NAME is left as is).
#
#   tests/fuzz/run.sh NAME [SECONDS [OPTION...]]
#                                      fuzz for SECONDS (default 60);
#                                      OPTIONs go to libFuzzer, e.g.
#                                      -runs=10000000 (stop there if
#                                      sooner), -fork=2 (two processes)
#   tests/fuzz/run.sh NAME --seeds     run each seed once, and stop
#
# NAME: sk_json, config, peer, control or frame_z (tests/fuzz/module.mk).  New
# inputs go to $FUZZ_WORK (default $BUILD/tests/fuzz/work/NAME), crashes
# and leaks to $FUZZ_ARTIFACTS (default $BUILD/tests/fuzz/crashes/NAME/,
# a prefix: keep the slash), each as the input that reproduces it:
#   $BUILD/tests/fuzz/fuzz_NAME FILE
# libFuzzer prints its statistics last (stat::number_of_executed_units).
# sk_json also reads the large seeds (queues of megabytes, made once by
# large-seeds.py); FUZZ_LARGE=0 leaves them out, so inputs start small
# and grow up to -max_len under libFuzzer's length control: about 40
# times as many executions a second (docs/testing.md).
# Runs under nice: the machine has other work.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build/check}
name=${1:?usage: run.sh NAME [SECONDS [OPTION...]|--seeds]}
secs=${2:-60}
shift $(($# < 2 ? $# : 2))
bin=$top/$BUILD/tests/fuzz/fuzz_$name
seeds=$top/tests/fuzz/corpus/$name
if [ ! -d "$seeds" ]; then
	echo "run.sh: no fuzz target '$name' (no $seeds)" >&2
	exit 2
fi
if [ ! -x "$bin" ]; then
	make -C "$top" --no-print-directory BUILD="$BUILD" \
	    "$BUILD/tests/fuzz/fuzz_$name" >&2
fi

# Per target: the largest input, and the time and memory one may take.
case $name in
sk_json)
	# A record with large queues: MIGR_RECORD_INLINE (128 KiB) of each
	# inline as base64, or chunks of up to MIGR_CHUNK_BYTES (384 KiB)
	# after it.  4 MiB holds a record announcing its queues and enough
	# chunks to complete a few MiB of them, the paths a socket with a
	# long queue takes.  Such an input takes up to a tenth of a second
	# (decoded, re-encoded, split and sent back in chunks), far below
	# -timeout.
	max_len=$((4 * 1024 * 1024)) timeout=30 rss=2048 ;;
config)
	# a migrd.conf: lines of at most 1024 characters
	max_len=16384 timeout=10 rss=1024 ;;
peer)
	# messages of at most max-message (64 KiB by default) each, but
	# records and chunks up to a frame (1 MiB): a few of them
	max_len=$((2 * 1024 * 1024)) timeout=30 rss=2048 ;;
frame_z)
	# compressed frames: a bomb of a MiB fits in a few hundred bytes,
	# and a frame that inflates to 64 KiB in less than 64 KiB
	max_len=65536 timeout=10 rss=1024 ;;
tree)
	# items of a few frames; a tree nests 32 deep at most
	max_len=$((256 * 1024)) timeout=10 rss=1024 ;;
control)
	# a request of at most max-message, or a migctl command line
	max_len=$((128 * 1024)) timeout=10 rss=1024 ;;
*)
	max_len=65536 timeout=10 rss=1024 ;;
esac
opts=(-max_len="$max_len" -timeout="$timeout" -rss_limit_mb="$rss"
    -print_final_stats=1)
[ -f "$top/tests/fuzz/$name.dict" ] && opts+=(-dict="$top/tests/fuzz/$name.dict")
dirs=("$seeds")
if [ "$name" = sk_json ] && [ "${FUZZ_LARGE:-1}" != 0 ]; then
	# sockets with queues of megabytes, too large for git: made once
	large=$top/$BUILD/tests/fuzz/large-seeds
	if [ ! -f "$large/large-inline.json" ]; then
		python3 "$top/tests/fuzz/large-seeds.py" "$large"
	fi
	dirs+=("$large")
fi

if [ "$secs" = --seeds ]; then
	# the first folder is where libFuzzer would add inputs: not git's
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	nice -n 19 "$bin" "${opts[@]}" -runs=0 "$tmp" "${dirs[@]}"
	exit
fi
if ! [[ $secs =~ ^[1-9][0-9]*$ ]]; then
	echo "run.sh: SECONDS must be a positive number, not '$secs'" >&2
	exit 2
fi
work=${FUZZ_WORK:-$top/$BUILD/tests/fuzz/work/$name}
artifacts=${FUZZ_ARTIFACTS:-$top/$BUILD/tests/fuzz/crashes/$name/}
mkdir -p "$work" "$(dirname "${artifacts}x")"
exec nice -n 19 "$bin" "${opts[@]}" -max_total_time="$secs" \
	-artifact_prefix="$artifacts" "$@" "$work" "${dirs[@]}"
