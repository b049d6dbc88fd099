# SPDX-License-Identifier: ISC
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

# unlike HAYSTACK PATTERN DESC (grep -E): the pattern is nowhere
unlike() {
	if grep -qE -- "$2" <<<"$1"; then
		fail "$3"; diag "unwanted /$2/ in:"; diag "$1"; else pass "$3"; fi
}

done_testing() { exit $((T_FAIL > 0)); }

# service_ns GUEST NS IPV4/PLEN IPV6/PLEN MAC: a network namespace on GUEST
# whose veth (named v$NS on the guest's side) is bridged onto the LAN.
service_ns() {
	gx "$1" "set -e
		ip netns add $2
		ip link add v$2 type veth peer name eth0 netns $2
		ip link set v$2 master br0 up
		ip -n $2 link set lo up
		ip -n $2 link set eth0 address $5 up
		ip -n $2 addr add $3 dev eth0
		ip -n $2 -6 addr add $4 dev eth0 nodad"
}

# service_ns_del GUEST NS: kill what runs in NS and remove it.
service_ns_del() {
	gx "$1" "ip netns pids $2 2>/dev/null | xargs -r kill -9; ip netns del $2; ip link del v$2" >/dev/null 2>&1
}

# neigh_after_ask GUEST ADDR...: GUEST's neighbour entries for ADDRs
# (IPv4 or IPv6), half a second after its kernel was made to ask again
neigh_after_ask() {
	local g=$1
	shift
	gx "$g" "for a in $*; do
			f=-4; case \$a in *:*) f=-6;; esac
			ip \$f neigh flush to \$a
			(ping \$f -c1 -W1 \$a >/dev/null 2>&1 &)
		done
		sleep 0.5
		for a in $*; do ip neigh show to \$a; done"
}

# kv REPORT KEY: the value of KEY in a "k=v k=v" report line.
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p" | tail -n1; }
