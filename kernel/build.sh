#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Build the migr guest kernel from Debian's linux-source-6.1.
#
#   kernel/build.sh            build (or reuse) and print the output folder
#   kernel/build.sh --path     print the output folder without building
#   kernel/build.sh --check    build, then run checkpatch.pl on the series
#
# The tree is unpacked outside the repository into a cache folder keyed by
# a hash of the tarball's package version, the config fragment, the series
# and every patch, and this script itself.  An unchanged input is never
# rebuilt.  The cache lives in $MIGR_CACHE (default /var/cache/migr).
#
# Output folder layout:
#   src/          the patched, configured source tree (headers for selftests)
#   bzImage       the guest kernel
#   vmlinux.id    build id of vmlinux (hex), as the guest shows in /sys/kernel/notes
#   release       `make kernelrelease`
#   config        the final .config
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tarball=${LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
cache=${MIGR_CACHE:-/var/cache/migr}
jobs=${JOBS:-$(nproc)}

die() { echo "kernel/build.sh: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball missing: run 'make deps' (package linux-source-6.1)"

pkgver=$(dpkg-query -W -f '${Version}' linux-source-6.1 2>/dev/null || stat -c %s-%Y "$tarball")
key=$( {
	echo "$pkgver"
	cat "$here/config" "$here/series" "$here/build.sh"
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		cat "$here/patches/$p"
	done < "$here/series"
} | sha256sum | cut -c1-16)
out="$cache/kernel-$key"

if [ "${1:-}" = "--path" ]; then
	echo "$out"
	exit 0
fi

if [ -f "$out/done" ]; then
	echo "kernel: cached $out" >&2
else
	mkdir -p "$cache"
	# built in place (kbuild records absolute paths); "done" marks completion
	work="$out"
	rm -rf "$work"
	mkdir -p "$work"
	echo "kernel: unpacking $tarball" >&2
	tar -C "$work" -xf "$tarball"
	mv "$work/linux-source-6.1" "$work/src"
	src="$work/src"

	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		echo "kernel: applying $p" >&2
		patch -d "$src" -p1 --forward --quiet < "$here/patches/$p" ||
			die "patch $p does not apply"
	done < "$here/series"

	export KBUILD_BUILD_USER=migr KBUILD_BUILD_HOST=vmlab
	export KBUILD_BUILD_TIMESTAMP="$(date -u -d @"$(stat -c %Y "$tarball")")"
	make -C "$src" -s tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "$here/config" >/dev/null
	make -C "$src" -s olddefconfig >/dev/null

	# Every option of the fragment must have survived olddefconfig.
	lost=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			opt=${line%%=*}
			grep -qxF "$line" "$src/.config" || {
				got=$(grep -E "^(# )?$opt[= ]" "$src/.config" || echo "absent")
				echo "kernel: $opt: wanted '${line#*=}', got: $got" >&2
				lost=1
			} ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }; opt=${opt%% *}
			grep -qE "^$opt=" "$src/.config" && {
				echo "kernel: $opt: wanted unset, but it is set" >&2
				lost=1
			} ;;
		esac
	done < "$here/config"
	[ "$lost" = 0 ] || die "config fragment options did not survive olddefconfig (see above)"

	echo "kernel: building bzImage with $jobs jobs" >&2
	make -C "$src" -s -j"$jobs" bzImage
	make -C "$src" -s headers_install INSTALL_HDR_PATH="$src/usr" >/dev/null
	cp "$src/arch/x86/boot/bzImage" "$work/bzImage"
	cp "$src/.config" "$work/config"
	make -C "$src" -s kernelrelease > "$work/release"
	readelf -n "$src/vmlinux" | awk '/Build ID/ { print $3 }' > "$work/vmlinux.id"
	[ -s "$work/vmlinux.id" ] || die "vmlinux has no build id"
	touch "$out/done"
	# keep older builds from piling up
	find "$cache" -maxdepth 1 -name 'kernel-*' ! -name "kernel-$key" \
		-mmin +1440 -exec rm -rf {} + 2>/dev/null || true
fi

if [ "${1:-}" = "--check" ]; then
	rc=0
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		"$out/src/scripts/checkpatch.pl" --no-tree -q --strict "$here/patches/$p" || rc=1
	done < "$here/series"
	exit $rc
fi
echo "$out"
