#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Install the Debian packages migr needs to build, test and run its lab.
# A no-op when every package is present.  Needs root (apt-get).
set -euo pipefail

pkgs=(
	# required by the project brief
	linux-source-6.1 qemu-system-x86 libevent-dev libjansson-dev
	libcap-dev busybox-static libnftables-dev
	# userland build: TLS through libevent, netlink, unit tests, fuzzing
	build-essential pkg-config libssl-dev libmnl-dev libcmocka-dev clang
	# the peer channel's compression, and its TLS process's system call
	# filter (migrd/tlsd_sandbox.c)
	zlib1g-dev libseccomp-dev
	# kernel build
	bc bison flex libelf-dev cpio xz-utils kmod patch perl python3 rsync
	# lab: switch, guest tools (the guests run the host's userland over 9p),
	# file (vmlab/lab: is busybox static?)
	vde2 iproute2 nftables tcpdump socat procps psmisc openssl util-linux
	iputils-ping ethtool groff-base jq systemd file
	# checkpoint mode: the process engine (issue 13), and the unmodified
	# stateful program its lab test moves (redis-tools holds the server's
	# binary; the redis-server package would start a daemon on this host)
	criu redis-tools
	# the drill's plots (tests/drill/drill.sh)
	gnuplot-nox
)

missing=()
for p in "${pkgs[@]}"; do
	case "$p" in '#'*) continue ;; esac
	st=$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
