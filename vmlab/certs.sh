#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# Lab certificates for migrd's peer channel (openssl CLI, EC P-256):
#
#   vmlab/certs.sh DIR [NAME=ADDRESS ...]
#
# makes DIR/ca.pem (+ ca-key.pem), and for each guest NAME (default: every
# guest in vmlab/guests) DIR/NAME.pem + DIR/NAME-key.pem with CN=NAME and
# SAN DNS:NAME, IP:ADDRESS.  It also makes a second, unrelated CA
# (DIR/rogue-ca.pem) and DIR/rogue.pem + DIR/rogue-key.pem signed by it,
# with the name of the first guest, for the "foreign CA is refused" test.
# Keys are 0600.  Existing files are replaced.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 DIR [NAME=ADDRESS ...]" >&2; exit 2; }
dir=$1; shift
mkdir -p "$dir"
umask 077

pairs=("$@")
if [ ${#pairs[@]} -eq 0 ]; then
	while read -r name _ v4 _; do
		case "$name" in ''|'#'*) continue ;; esac
		pairs+=("$name=${v4%/*}")
	done < "$top/vmlab/guests"
fi

newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

make_ca() {	# make_ca PREFIX CN
	newkey "$dir/$1-key.pem"
	openssl req -x509 -new -key "$dir/$1-key.pem" -sha256 -days 3650 \
		-subj "/CN=$2" -out "$dir/$1.pem" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign"
}

make_cert() {	# make_cert CA-PREFIX OUT-PREFIX NAME ADDRESS
	local ext
	ext=$(mktemp)
	printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:%s,IP:%s\n' "$3" "$4" > "$ext"
	newkey "$dir/$2-key.pem"
	openssl req -new -key "$dir/$2-key.pem" -subj "/CN=$3" -out "$dir/$2.csr"
	openssl x509 -req -in "$dir/$2.csr" -CA "$dir/$1.pem" \
		-CAkey "$dir/$1-key.pem" -CAcreateserial -days 825 -sha256 \
		-extfile "$ext" -out "$dir/$2.pem" 2>/dev/null
	rm -f "$dir/$2.csr" "$ext"
}

make_ca ca "migr lab CA"
for p in "${pairs[@]}"; do
	make_cert ca "${p%%=*}" "${p%%=*}" "${p#*=}"
done
make_ca rogue-ca "rogue CA"
first=${pairs[0]}
make_cert rogue-ca rogue "${first%%=*}" "${first#*=}"
chmod 0644 "$dir"/*.pem
chmod 0600 "$dir"/*-key.pem
rm -f "$dir"/*.srl
echo "certificates in $dir: ca.pem ${pairs[*]%%=*} rogue"
