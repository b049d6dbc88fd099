# Sourced by every lab test (tests/lab/NNN-name.sh).  Gives TAP output
# helpers and `gx GUEST CMD...` to run a command in a lab guest.
# The runner (tests/run) parses the "ok"/"not ok" lines.
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build/check}
B="$top/$BUILD"			# build folder, same path inside the guests
LAB="$top/vmlab/lab"
T_N=0
T_FAIL=0

# gx [-t SECONDS] GUEST CMD...: run CMD in GUEST (default limit 60 s).
gx() {
	local t=60
	if [ "$1" = -t ]; then t=$2; shift 2; fi
	"$LAB" exec -t "$t" "$@"
}

# Results.  Each prints one TAP line; diagnostics go to stderr as "# ".
pass() { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
fail() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $*"; }
skip() { T_N=$((T_N + 1)); echo "ok $T_N # SKIP $*"; }
diag() { sed 's/^/# /' <<<"$*" >&2; }

# check DESC CMD...: pass if CMD exits 0.
check() {
	local desc=$1 out; shift
	if out=$("$@" 2>&1); then pass "$desc"; else fail "$desc"; diag "$out"; fi
}

# is ACTUAL EXPECTED DESC
is() {
	if [ "$1" = "$2" ]; then pass "$3"; else
		fail "$3"; diag "expected: '$2'"; diag "got:      '$1'"; fi
}

# like HAYSTACK PATTERN DESC (grep -E)
like() {
	if grep -qE -- "$2" <<<"$1"; then pass "$3"; else
		fail "$3"; diag "wanted /$2/ in:"; diag "$1"; fi
}

done_testing() { exit $((T_FAIL > 0)); }
