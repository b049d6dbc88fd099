#!/usr/bin/env bash
# Installed as $BUILD/tests/unit/fuzz_sk_json by tests/fuzz/module.mk:
# a bounded fuzz run (FUZZ_SMOKE_SECONDS, default 20) that tests/run
# counts like a unit test.  TAP: the seed corpus alone passes, then the
# timed run finds no crash.
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
bin=$here/../fuzz/fuzz_sk_json
secs=${FUZZ_SMOKE_SECONDS:-20}
log=$here/../fuzz/smoke.log
echo "1..2"
if "$bin" -runs=0 "$top/tests/fuzz/corpus" > "$log" 2>&1; then
	echo "ok 1 - fuzz_sk_json: seed corpus decodes or is refused cleanly"
else
	echo "not ok 1 - fuzz_sk_json: seed corpus (see $log)"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 \
    -rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$here/../fuzz/" \
    "$work" "$top/tests/fuzz/corpus" >> "$log" 2>&1; then
	execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1)
	echo "ok 2 - fuzz_sk_json: ${secs}s without a crash (${execs:-see $log})"
else
	echo "not ok 2 - fuzz_sk_json: crash or leak found (see $log)"
	exit 1
fi
