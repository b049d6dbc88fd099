#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The kernel selftest of the TCP repair API (kernel/patches/0001-*), built
# on the host from the patched guest kernel tree and run in host1 on the
# kernel it documents.  Each kselftest case becomes one TAP line here.
. "$(dirname "$0")/../lib.sh"

kdir=${MIGR_KERNEL:-$("$top/kernel/build.sh" --path)}
ksrc=$kdir/src
sdir=$ksrc/tools/testing/selftests/net
out=$B/kselftest/net
bin=$out/tcp_repair

if [ ! -f "$sdir/tcp_repair.c" ]; then
	fail "selftest source in the kernel tree"
	diag "$sdir/tcp_repair.c missing: is the patch in kernel/series and" \
		"the kernel rebuilt (kernel/build.sh)?"
	done_testing
fi

# The selftests Makefile builds it, with the tree's installed uapi headers.
mkdir -p "$out"
if ! log=$(make -s -C "$sdir" OUTPUT="$out" "$bin" 2>&1); then
	fail "build tcp_repair with the selftests Makefile"
	diag "$log"
	done_testing
fi
[ -z "$log" ] || diag "$log"

# The harness runs every case in its own namespaces: nothing to clean up.
res=$(gx -t 900 host1 "$bin" 2>&1)
rc=$?
diag "$res"

# "ok N fixture.variant.test", "not ok N ...", and for a skip
# "ok N # SKIP reason", named only by the "#  RUN ..." line before it.
planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' <<<"$res" | head -n1)
seen=0 current=
while IFS= read -r line; do
	case "$line" in
	"#  RUN "*)
		current=$(awk '{ print $3 }' <<<"$line")
		continue ;;
	"not ok "*)
		fail "kselftest ${line#not ok [0-9]* }" ;;
	"ok "[0-9]*" # SKIP"*)
		skip "kselftest $current:${line#*# SKIP}" ;;
	"ok "*)
		pass "kselftest ${line#ok [0-9]* }" ;;
	*) continue ;;
	esac
	seen=$((seen + 1))
done <<<"$res"

if [ -z "$planned" ] || [ "$seen" -ne "$planned" ]; then
	fail "tcp_repair ran all its cases (planned '${planned:-none}', reported $seen, exit $rc)"
fi
done_testing
