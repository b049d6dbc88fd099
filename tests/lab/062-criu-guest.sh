#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# The ground checkpoint mode (issue 13) stands on: CRIU, Debian's criu,
# runs in a lab guest on the lab's kernel.  `criu check` finds every
# kernel feature it needs for a dump and a restore; a process tree (a
# shell counting in its own memory, a child it waits for, a pipe between
# them) in a network namespace and a cgroup of its own is dumped to a
# tmpfs and killed, then restored into the same namespace, which CRIU
# is told is not its own: same process ids, and the count goes on from
# where the memory held it instead of starting again.
. "$(dirname "$0")/../lib.sh"

CG=/sys/fs/cgroup/crtest
IMG=/run/crtest.img
cleanup() {
	gx host1 "[ -e $CG ] && { echo 1 > $CG/cgroup.kill; sleep 0.3; rmdir $CG; }
		ip netns del crt; umount $IMG; rm -rf $IMG /tmp/crt.*" >/dev/null 2>&1
}
trap cleanup EXIT
cleanup

is "$(gx host1 'zcat /proc/config.gz | grep -c -E "^CONFIG_(CHECKPOINT_RESTORE|MEM_SOFT_DIRTY|FHANDLE|USERFAULTFD)=y"')" 4 \
	"the guest kernel has checkpoint/restore, soft-dirty bits, file handles, userfaultfd"
out=$(gx host1 "criu check 2>&1; echo rc=\$?")
diag "$out"
like "$out" "Looks good" "criu check: the kernel has what a dump and a restore need"
is "$(sed -n 's/^rc=//p' <<<"$out")" 0 "criu check exits 0"

# The tree: sh counts in a variable (memory only) and writes each value
# into a pipe; its child, cat, copies the pipe to a file.  Started
# detached (no terminal: no --shell-job), in netns crt and cgroup crtest,
# through nsenter: "ip netns exec" would also give it a mount namespace
# of its own, which CRIU would then dump (checkpoint mode has to decide
# about the workloads' own mount namespace; this test does not).
check "a counting shell and its child in netns crt, cgroup crtest" gx host1 "set -e
	ip netns add crt
	mkdir $CG
	setsid sh -c 'echo \$\$ > $CG/cgroup.procs; exec nsenter --net=/run/netns/crt sh -c \"i=0; while :; do i=\\\$((i + 1)); echo \\\$i; sleep 0.1; done | cat > /tmp/crt.count\"' \
		</dev/null >/dev/null 2>&1 &
	for i in \$(seq 50); do [ -s /tmp/crt.count ] && exit 0; sleep 0.1; done; exit 1"
sleep 1
root=$(gx host1 "cat $CG/cgroup.procs | head -1")
# the long-lived tasks: the root and its children, the loop's subshell
# and cat (each "sleep 0.1" is a grandchild and ends by itself)
pids=$(gx host1 "for p in \$(cat $CG/cgroup.procs); do
	[ \$p = $root ] || [ \$(cut -d' ' -f4 /proc/\$p/stat) = $root ] && echo \$p; done | sort -n | tr '\n' ' '")
diag "tree root $root, tasks $pids"
# The namespace is not CRIU's to dump: migrd builds and moves it.  It is
# named external on the dump and handed back as a descriptor on the
# restore, as checkpoint mode will do.
out=$(gx -t 120 host1 "mkdir -p $IMG && mount -t tmpfs crtest $IMG &&
	criu dump -t $root -D $IMG -o dump.log -v4 --network-lock nftables --external net[\$(stat -L -c %i /run/netns/crt)]:crtnet &&
	echo dumped; grep -B6 -m2 Error $IMG/dump.log; tail -3 $IMG/dump.log")
diag "$out"
like "$out" "^dumped" "criu dump of the tree"
is "$(gx host1 "cat $CG/cgroup.procs | wc -l")" 0 "the dumped tree is gone"
# CRIU's own traffic lock (nftables) stays in the namespace after a dump
# that succeeded; migrd keeps its own lock, so checkpoint mode deletes it
left=$(gx host1 "ip netns exec crt nft list tables | grep -o 'CRIU-[0-9]*'")
diag "CRIU's table left in crt: ${left:-none}"
[ -z "$left" ] || gx host1 "ip netns exec crt nft delete table inet $left"
before=$(gx host1 "tail -1 /tmp/crt.count")
diag "last count before the restore: $before"
out=$(gx -t 120 host1 "cd / && criu restore -D $IMG -o restore.log -v4 -d --inherit-fd fd[3]:crtnet 3</run/netns/crt &&
	echo restored; grep -B6 -m2 Error $IMG/restore.log; tail -3 $IMG/restore.log")
diag "$out"
like "$out" "^restored" "criu restore of the tree"
sleep 1
after=$(gx host1 "for p in $pids; do kill -0 \$p || echo gone \$p; done; tail -1 /tmp/crt.count")
diag "after the restore: $after"
unlike "$after" "gone" "every task is back with its process id"
count=$(tail -1 <<<"$after")
if [ "${count:-0}" -gt "${before:-0}" ] 2>/dev/null; then
	pass "the count goes on from memory ($before, then $count)"
else
	fail "the count did not go on ($before, then ${count:-nothing})"
fi
is "$(gx host1 "awk 'NR > 1 && \$1 != prev + 1 { bad++ } { prev = \$1 } END { print bad + 0 }' /tmp/crt.count")" 0 \
	"no number lost or repeated across the dump and restore"
is "$(gx host1 "ip netns identify $root")" crt "the restored tree is in netns crt again"
done_testing
