#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# A second, private lab comes up beside the one under test and its
# teardown leaves no process and no file behind; bringing a lab up twice
# in one folder is refused.
. "$(dirname "$0")/../lib.sh"

priv=$(mktemp -d /tmp/migr-lab-teardown.XXXXXX)
export MIGR_LAB=$priv/lab
trap 'MIGR_LAB=$priv/lab "$LAB" down >/dev/null 2>&1; rm -rf "$priv"' EXIT

check "a private lab with one guest comes up" "$LAB" up client
is "$("$LAB" exec client hostname)" client "its guest answers"
out=$("$LAB" up client 2>&1); rc=$?
is "$rc" 1 "a second 'up' in the same folder is refused"
like "$out" "already up" "with a message that says why"
check "status reports the guest up" "$LAB" status

"$LAB" down
is "$(pgrep -f -- "$priv/lab" | wc -l)" 0 "no qemu or vde_switch process is left"
if [ -e "$priv/lab" ]; then fail "the lab folder is removed"; else pass "the lab folder is removed"; fi
out=$("$LAB" exec client true 2>&1); rc=$?
is "$rc" 255 "exec into a lab that is down fails with status 255"
done_testing
