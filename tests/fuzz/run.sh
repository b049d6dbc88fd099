#!/usr/bin/env bash
# Run the record-decoder fuzz target for SECONDS (default 60) over a
# working copy of the seed corpus (tests/fuzz/corpus is left as is;
# new inputs go to $BUILD/tests/fuzz/work, crashes to .../crashes).
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build/check}
secs=${1:-60}
bin=$top/$BUILD/tests/fuzz/fuzz_sk_json
if [ ! -x "$bin" ]; then
	make -C "$top" --no-print-directory BUILD="$BUILD" "$BUILD/tests/fuzz/fuzz_sk_json" >&2
fi
work=$top/$BUILD/tests/fuzz/work
crashes=$top/$BUILD/tests/fuzz/crashes
mkdir -p "$work" "$crashes"
exec "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 \
	-rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$crashes/" \
	"$work" "$top/tests/fuzz/corpus"
