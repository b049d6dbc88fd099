#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Every guest runs the kernel we built: its release and its build id (the
# ELF note the guest exports in /sys/kernel/notes) match the bzImage's.
. "$(dirname "$0")/../lib.sh"

kdir=$(cat "${MIGR_LAB:-/run/migr-lab}/kernel")
if [ -n "${MIGR_KERNEL:-}" ]; then
	skip "the lab boots MIGR_KERNEL=$MIGR_KERNEL, not the tree's kernel"
else
	is "$kdir" "$("$top/kernel/build.sh" --path)" "the lab booted the kernel kernel/ describes"
fi
release=$(cat "$kdir/release")
buildid=$(cat "$kdir/vmlinux.id")

for g in host1 host2 client; do
	is "$(gx "$g" uname -r)" "$release" "$g runs kernel release $release"
	notes=$(gx "$g" "od -An -tx1 -v /sys/kernel/notes | tr -d ' \n'")
	like "$notes" "$buildid" "$g kernel build id is $buildid"
	is "$(gx "$g" hostname)" "$g" "$g has its name"
done
done_testing
