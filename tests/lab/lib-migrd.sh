# SPDX-License-Identifier: ISC
# Sourced by the migrd lab tests (tests/lab/04x-*.sh) after tests/lib.sh.
# Certificates and configs live in the lab's shared folder: host side
# $MSHARE, guest side $GSHARE (/mnt/lab is $MIGR_LAB/share).  Each guest's
# migrd runs in the foreground (-d -v), logs to /run/migrd/migrd.log and
# writes its pid to /run/migrd/test.pid.
LABDIR=${MIGR_LAB:-/run/migr-lab}
MSHARE=$LABDIR/share/migrd
GSHARE=/mnt/lab/migrd
MIGRD=$B/migrd/migrd
MIGCTL=$B/migctl/migctl
declare -A GADDR=([host1]=10.77.0.1 [host2]=10.77.0.2 [client]=10.77.0.10)
# the peer protocol's version (frame headers, hello) and the records'
PV=$(sed -n 's/^#define MIGR_PROTO_VERSION[[:space:]]*//p' "$top/common/migrd-protocol.h")
RV=$(sed -n 's/^#define SK_JSON_VERSION[[:space:]]*//p' "$top/common/records/sk_json.h")

# migrd_certs: lab CA, one cert per guest, rogue CA + cert (once per lab).
migrd_certs() {
	[ -s "$MSHARE/certs/rogue.pem" ] && return 0
	mkdir -p "$MSHARE"
	"$top/vmlab/certs.sh" "$MSHARE/certs" >/dev/null
}

# migrd_conf GUEST [PEER...] [-- EXTRA-LINE...]: write $MSHARE/GUEST.conf
# Each peer is allowed what the lab's tests bring (lab_allow) unless an
# EXTRA-LINE says "allow PEER ..." itself.
migrd_conf() {
	local g=$1 p peers=(); shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do peers+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	{
		echo "# written by tests/lab/lib-migrd.sh"
		echo "hostname $g"
		echo "listen ${GADDR[$g]} port 7780"
		for p in "${peers[@]}"; do
			echo "peer $p ${GADDR[$p]} port 7780"
			printf '%s\n' "$@" | grep -q "^allow $p " || lab_allow "$p"
		done
		echo "certificate $GSHARE/certs/$g.pem"
		echo "key $GSHARE/certs/$g-key.pem"
		echo "ca $GSHARE/certs/ca.pem"
		echo "state-dir /var/lib/migrd"
		# under TCG a busy guest may not run migrd for a second or two
		echo "heartbeat-interval 500"
		echo "dead-time 4000"
		echo "handshake-timeout 10"
		# streamd reads its sequence numbers in repair mode, and the
		# build folder may not be open to "nobody" (a clone in /root):
		# the lab runs workloads as root unless a test says otherwise
		# (050 runs them as the default, nobody)
		printf '%s\n' "$@" | grep -q "^workload-user " || echo "workload-user root"
		for p in "$@"; do echo "$p"; done
	} > "$MSHARE/$g.conf"
}

# ckpt_conf GUEST PEER [MIB] [-- EXTRA-LINE...]: migrd.conf for
# checkpoint mode: the lab's policy for PEER, the workload user nobody
# (a restored program may not run as root), checkpointed programs from
# PEER up to MIB MiB of images if MIB is given, and the extra lines
ckpt_conf() {
	local g=$1 p=$2 mib= lines
	shift 2
	if [ $# -gt 0 ] && [ "$1" != -- ]; then mib=$1; shift; fi
	[ "${1:-}" = -- ] && shift
	mapfile -t lines < <(lab_allow "$p")
	migrd_conf "$g" "$p" -- "workload-user nobody" "$@" "${lines[@]}" \
		${mib:+"allow $p checkpoint $mib"}
}

# lab_allow PEER: the policy lab tests run under: the test programs
# (the build folder, with migr-inetd and the workloads, and /bin/ for cat
# and sleep under migr-inetd), the lab's LAN, any MAC (namespaces made
# without --mac have the kernel's), any name.
lab_allow() {
	echo "allow $1 program $B/ /bin/ /usr/bin/"
	echo "allow $1 address 10.77.0.0/24 fd00:77::/64"
	echo "allow $1 mac *"
	echo "allow $1 namespace *"
}

# migrd_start GUEST [VAR=VALUE...]: start migrd (with those variables in
# its environment, e.g. MIGRD_FAULT=...), wait (10 s) until it answers.
# (LAB_NOFILE: its limit of open files, soft and hard; the guest's
# default is 1,024 and 4,096)
migrd_start() {
	local g=$1; shift
	gx "$g" "${LAB_NOFILE:+ulimit -n $LAB_NOFILE; }setsid env $* $MIGRD -d -v -f $GSHARE/$g.conf </dev/null \
		>>/run/migrd/migrd.log 2>&1 & echo \$! > /run/migrd/test.pid
		for i in \$(seq 100); do
			$MIGCTL status >/dev/null 2>&1 && exit 0; sleep 0.1
		done
		echo 'migrd did not answer:'; tail -20 /run/migrd/migrd.log; exit 1"
}

# migrd_peered GUEST PEER: wait (15 s) until GUEST's session with PEER is up
migrd_peered() {
	gx "$1" "for i in \$(seq 150); do
		$MIGCTL -j peers | jq -e '.data.peers[] | select(.name == \"$2\" and .state == \"up\")' >/dev/null && exit 0
		sleep 0.1; done; exit 1"
}

# migrd_stop GUEST: SIGTERM, wait until the process is gone.
migrd_stop() {
	gx "$1" '[ -s /run/migrd/test.pid ] || exit 0
		p=$(cat /run/migrd/test.pid); kill $p 2>/dev/null
		for i in $(seq 50); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
		rm -f /run/migrd/test.pid'
}

# mc GUEST ARGS...: migctl in GUEST (quote ARGS for sh -c).
mc() { local g=$1; shift; gx "$g" "$MIGCTL $*"; }

# migrd_log GUEST: the guest's migrd log
migrd_log() { gx "$1" 'cat /run/migrd/migrd.log 2>/dev/null'; }

# migrd_cleanup GUEST...: stop migrd, delete what it made, clear state.
migrd_cleanup() {
	local g
	for g in "$@"; do
		gx "$g" "$MIGCTL -j ns list 2>/dev/null | jq -r '.data.namespaces[].name' 2>/dev/null |
			while read -r n; do $MIGCTL ns delete \$n; done" >/dev/null 2>&1
		migrd_stop "$g" >/dev/null 2>&1
		# what held its event loop (loopwatch.c), with the four lines
		# before each hold and the two after, kept for the lab's
		# record before the log goes
		gx "$g" "grep -h -B4 -A2 'event loop held' /run/migrd/migrd.log 2>/dev/null |
			sed 's|^|$(basename "$0" .sh) $g: |' >> /mnt/lab/loop-holds.log" >/dev/null 2>&1
		# and what each step of going live took (mig_dst.c's "live"
		# line, the commit point's write before it)
		gx "$g" "grep -hE 'sockets out of repair in|-> live \(written|workload (ready to start|started), pid' /run/migrd/migrd.log 2>/dev/null |
			sed 's|^|$(basename "$0" .sh) $g: |' >> /mnt/lab/go-live.log" >/dev/null 2>&1
		# one a failed test lost track of
		gx "$g" "pkill -x migrd; sleep 0.3; pkill -9 -x migrd; true" >/dev/null 2>&1
		gx "$g" 'rm -rf /var/lib/migrd/* /var/log/migr /run/migrd/migrd.sock /run/migrd/migrd.log' \
			>/dev/null 2>&1
	done
}

# frame TYPE VERSION JSON: a raw frame on stdout (header + payload)
frame() {
	local len=${#3}
	printf "\\x$(printf %02x $(($1 >> 8)))\\x$(printf %02x $(($1 & 255)))"
	printf "\\x$(printf %02x $(($2 >> 8)))\\x$(printf %02x $(($2 & 255)))"
	printf "\\x$(printf %02x $((len >> 24 & 255)))\\x$(printf %02x $((len >> 16 & 255)))"
	printf "\\x$(printf %02x $((len >> 8 & 255)))\\x$(printf %02x $((len & 255)))"
	printf '%s' "$3"
}

# frame_hdr TYPE VERSION LEN: a header only (announcing LEN bytes)
frame_hdr() {
	local len=$3
	printf "\\x00\\x$(printf %02x $1)\\x00\\x$(printf %02x $2)"
	printf "\\x$(printf %02x $((len >> 24 & 255)))\\x$(printf %02x $((len >> 16 & 255)))"
	printf "\\x$(printf %02x $((len >> 8 & 255)))\\x$(printf %02x $((len & 255)))"
}
