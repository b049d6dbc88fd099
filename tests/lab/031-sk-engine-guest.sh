#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The socket engine's cases, and the lock's, on the guest's Linux 6.1,
# the kernel that counts (on the build host they ran on its own kernel):
#  - tests/unit/test_sk_engine.c: every TCP state and family on
#    loopback, a dual-stack IPv4 connection, both ends of an in-namespace
#    pair, a listener with its accept queue, UDP, bound sockets, options
#    read back, refusals;
#  - tests/unit/test_sk_lossless.c: slow readers with megabytes queued
#    both ways, a half-close behind a full receive queue (6.1 drops a FIN
#    that meets a zero window), connections that ended with bytes unread
#    (FIN and RST), urgent data refused, every kind of option, refused
#    options, SYN_SENT, the MSS, unread UDP datagrams, a reset child in
#    an accept queue, a child reset on rollback, O_NONBLOCK;
#  - tests/unit/test_nslock.c: the lock lifted by a netlink batch of
#    our own (nftbatch.c) on the guest's nf_tables.
. "$(dirname "$0")/../lib.sh"

like "$(gx host1 'uname -r')" '^6\.1\.' "host1 runs Linux 6.1"
for t in test_sk_engine test_sk_lossless test_nslock; do
	out=$(gx -t 300 host1 "CMOCKA_MESSAGE_OUTPUT=TAP $B/tests/unit/$t 2>&1; echo exit=\$?")
	n=0
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*|"not ok "*"# SKIP"*) skip "6.1: $t: ${line#*# SKIP}"; n=$((n + 1)) ;;
		"ok "*) pass "6.1: $t: ${line#ok [0-9]* - }"; n=$((n + 1)) ;;
		"not ok "*) fail "6.1: $t: ${line#not ok [0-9]* - }"; n=$((n + 1)) ;;
		esac
	done < <(grep -E '^(not )?ok [0-9]' <<<"$out")
	[ "$n" -gt 0 ] || { fail "$t ran no case in host1"; diag "$out"; }
	like "$out" "exit=0" "$t exits 0 in host1 (no sanitizer report)"
	grep -q "^exit=0" <<<"$out" || diag "$out"
done
done_testing
