#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Installed as $BUILD/tests/unit/fuzz_NAME for each fuzz target by
# tests/fuzz/module.mk: a bounded run (FUZZ_SMOKE_SECONDS, default 12;
# four targets make under a minute) that tests/run counts like a unit
# test.  TAP: the seed corpus alone passes, then the timed run finds no
# crash.  The log is $BUILD/tests/fuzz/NAME-smoke.log, a crash's input
# $BUILD/tests/fuzz/NAME-crash-*.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
name=$(basename "$0")
name=${name#fuzz_}
secs=${FUZZ_SMOKE_SECONDS:-12}
fuzzdir=$(cd "$here/../fuzz" && pwd)
log=$fuzzdir/$name-smoke.log
export BUILD=${fuzzdir#"$top"/}
BUILD=${BUILD%/tests/fuzz}
echo "1..2"
if "$top/tests/fuzz/run.sh" "$name" --seeds > "$log" 2>&1; then
	echo "ok 1 - fuzz_$name: the seed corpus passes"
else
	echo "not ok 1 - fuzz_$name: seed corpus (see $log)"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if FUZZ_WORK=$work FUZZ_ARTIFACTS=$fuzzdir/$name- \
    "$top/tests/fuzz/run.sh" "$name" "$secs" >> "$log" 2>&1; then
	execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" |
	    tail -1)
	echo "ok 2 - fuzz_$name: ${secs}s without a crash (${execs:-see $log})"
else
	echo "not ok 2 - fuzz_$name: crash or leak found (see $log)"
	exit 1
fi
