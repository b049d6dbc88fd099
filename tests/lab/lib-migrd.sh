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

# migrd_certs: lab CA, one cert per guest, rogue CA + cert (once per lab).
migrd_certs() {
	[ -s "$MSHARE/certs/rogue.pem" ] && return 0
	mkdir -p "$MSHARE"
	"$top/vmlab/certs.sh" "$MSHARE/certs" >/dev/null
}

# migrd_conf GUEST [PEER...] [-- EXTRA-LINE...]: write $MSHARE/GUEST.conf
migrd_conf() {
	local g=$1 p; shift
	{
		echo "# written by tests/lab/lib-migrd.sh"
		echo "hostname $g"
		echo "listen ${GADDR[$g]} port 7780"
		while [ $# -gt 0 ] && [ "$1" != -- ]; do
			echo "peer $1 ${GADDR[$1]} port 7780"; shift
		done
		[ "${1:-}" = -- ] && shift
		echo "certificate $GSHARE/certs/$g.pem"
		echo "key $GSHARE/certs/$g-key.pem"
		echo "ca $GSHARE/certs/ca.pem"
		echo "state-dir /var/lib/migrd"
		echo "heartbeat-interval 500"
		echo "dead-time 2000"
		for p in "$@"; do echo "$p"; done
	} > "$MSHARE/$g.conf"
}

# migrd_start GUEST [VAR=VALUE...]: start migrd (with those variables in
# its environment, e.g. MIGRD_FAULT=...), wait (10 s) until it answers.
migrd_start() {
	local g=$1; shift
	gx "$g" "setsid env $* $MIGRD -d -v -f $GSHARE/$g.conf </dev/null \
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
		gx "$g" "$MIGCTL ns list -j 2>/dev/null | jq -r '.data.namespaces[].name' 2>/dev/null |
			while read -r n; do $MIGCTL ns delete \$n; done" >/dev/null 2>&1
		migrd_stop "$g" >/dev/null 2>&1
		# one a failed test lost track of
		gx "$g" "pkill -x migrd; sleep 0.3; pkill -9 -x migrd; true" >/dev/null 2>&1
		gx "$g" 'rm -rf /var/lib/migrd/* /run/migrd/migrd.sock /run/migrd/migrd.log' \
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
