#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# `make install DESTDIR=...` puts the programs, units, man pages and the
# example config where the operations guide says, with paths substituted
# in the unit, and the man pages format without a warning.
. "$(dirname "$0")/../lib.sh"

stage=$(mktemp -d /tmp/migr-install.XXXXXX)
trap 'rm -rf "$stage"' EXIT
# the build the other tests use, with its own flags: a rebuild here with
# other flags would replace (or, failing to link, remove) their binaries
san=0
[ "$BUILD" = build/check ] && san=1
check "make install DESTDIR=$stage" make -s -C "$top" install BUILD="$BUILD" SAN=$san \
	DESTDIR="$stage" PREFIX=/usr SYSCONFDIR=/etc
for f in usr/sbin/migrd usr/sbin/migctl; do
	if [ -x "$stage/$f" ]; then pass "$f installed, executable"; else fail "$f installed, executable"; fi
done
for f in etc/migrd/migrd.conf.example lib/systemd/system/migrd.service \
	lib/systemd/system/migrd.socket usr/share/man/man8/migrd.8 \
	usr/share/man/man8/migctl.8 usr/share/man/man5/migrd.conf.5; do
	if [ -s "$stage/$f" ]; then pass "$f installed"; else fail "$f installed"; fi
done
unit=$(cat "$stage/lib/systemd/system/migrd.service")
like "$unit" "^ExecStart=/usr/sbin/migrd " "the unit runs the installed migrd"
like "$unit" "^Type=notify" "the unit is Type=notify"
if grep -q '@[A-Z]*@' <<<"$unit"; then fail "no placeholder left in the unit"; else pass "no placeholder left in the unit"; fi
# the unit's syntax and options, its binary at the staged path (--man=no:
# the pages of Documentation= are not installed on this host)
if command -v systemd-analyze >/dev/null; then
	v=$(mktemp -d)
	sed "s|/usr/sbin/|$stage/usr/sbin/|g" "$stage/lib/systemd/system/migrd.service" > "$v/migrd.service"
	cp "$stage/lib/systemd/system/migrd.socket" "$v/"
	out=$(cd "$v" && systemd-analyze verify --man=no ./migrd.service 2>&1; echo "rc=$?")
	rm -rf "$v"
	is "$out" "rc=0" "systemd-analyze verify: the unit is valid, without a warning"
else
	skip "systemd-analyze verify: no systemd-analyze here"
fi
like "$unit" "CAP_SYS_CHROOT" "the TLS process may chroot (its bounding set)"
like "$unit" "^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK AF_PACKET" "socket families are restricted"
for m in man8/migrd.8 man8/migctl.8 man5/migrd.conf.5; do
	out=$(groff -mdoc -ww -z "$stage/usr/share/man/$m" 2>&1)
	is "$out" "" "$m formats without a warning"
done
is "$("$stage/usr/sbin/migrd" -n -f "$stage/etc/migrd/migrd.conf.example" >/dev/null 2>&1; echo $?)" 0 \
	"the example config passes migrd -n"
done_testing
