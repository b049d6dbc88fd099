#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# "migctl migrate" moves a namespace with 50 live client connection(s)
# (IPv4 and IPv6, busy, idle, half-closed either way, plus 4 listeners)
# host1 -> host2 and back, under traffic; see lib-migrate-run.sh.
# Every descriptor both migrds open after start-up is numbered above
# 1100 (fault fds-high), as with thousands of sockets: nothing, theirs or
# a library's, may select() on one (libnftables does, on its own socket).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
CONNS=50 RATE=5000 MIN_SOCKETS=30 SECS=35 MIG_FAULTS=fds-high
. "$(dirname "$0")/lib-migrate-run.sh"
