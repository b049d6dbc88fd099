#!/usr/bin/env bash
# The socket engine's cases (tests/unit/test_sk_engine.c: every TCP
# state and family on loopback, a dual-stack IPv4 connection, both ends
# of an in-namespace pair, a listener with its accept queue, UDP, bound
# sockets, options read back, refusals) on the guest's Linux 6.1, the
# kernel that counts; on the build host they ran on its own kernel.
. "$(dirname "$0")/../lib.sh"

out=$(gx -t 300 host1 "CMOCKA_MESSAGE_OUTPUT=TAP $B/tests/unit/test_sk_engine 2>&1; echo exit=\$?")
like "$(gx host1 'uname -r')" '^6\.1\.' "host1 runs Linux 6.1"
n=0
while IFS= read -r line; do
	case "$line" in
	"ok "*"# SKIP"*|"not ok "*"# SKIP"*) skip "6.1: ${line#*# SKIP}"; n=$((n + 1)) ;;
	"ok "*) pass "6.1: ${line#ok [0-9]* - }"; n=$((n + 1)) ;;
	"not ok "*) fail "6.1: ${line#not ok [0-9]* - }"; n=$((n + 1)) ;;
	esac
done < <(grep -E '^(not )?ok [0-9]' <<<"$out")
[ "$n" -gt 0 ] || { fail "test_sk_engine ran no case in host1"; diag "$out"; }
like "$out" "exit=0" "test_sk_engine exits 0 in host1 (no sanitizer report)"
grep -q "^exit=0" <<<"$out" || diag "$out"
done_testing
