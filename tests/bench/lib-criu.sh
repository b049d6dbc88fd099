# SPDX-License-Identifier: ISC
# Sourced by the benchmarks after tests/lib.sh: CRIU alone, in place, as
# the figure migr's own downtime stands beside.

# ms_since T0 T1: ms between two instants a guest printed (date +%s%N)
ms_since() { echo $(( ($2 - $1) / 1000000 )); }

# criu_in_place GUEST PID NETNS IMG: criu dump of PID's tree (its network
# namespace NETNS external, as migrd keeps it) onto a tmpfs mounted at
# IMG, then criu restore in place.  Prints "DUMP_MS RESTORE_MS BYTES"
# (BYTES: the images'), or CRIU's first errors on stderr and returns 1.
criu_in_place() {
	local g=$1 pid=$2 net=$3 img=$4 r t0 t1 t2 bytes extra
	r=$(gx -t 1800 "$g" "mkdir -p $img && mount -t tmpfs $net $img || exit 1
		ino=\$(stat -L -c %i /run/netns/$net)
		t0=\$(date +%s%N)
		criu dump -t $pid -D $img -o dump.log --tcp-established --network-lock nftables \
			--external net[\$ino]:${net}net || { grep -m3 Error $img/dump.log; exit 1; }
		t1=\$(date +%s%N)
		cd / && criu restore -D $img -o restore.log -d --tcp-established \
			--inherit-fd fd[9]:${net}net 9</run/netns/$net || { grep -m3 Error $img/restore.log; exit 1; }
		t2=\$(date +%s%N)
		echo \$t0 \$t1 \$t2 \$(du -sb $img | cut -f1)")
	read -r t0 t1 t2 bytes extra <<<"$r"
	if [ -z "$bytes" ] || [ -n "$extra" ] || ! [ "$t0" -gt 0 ] 2>/dev/null; then
		echo "$r" >&2
		return 1
	fi
	echo "$(ms_since "$t0" "$t1") $(ms_since "$t1" "$t2") $bytes"
}
