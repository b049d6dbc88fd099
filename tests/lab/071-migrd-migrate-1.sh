#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# "migctl migrate" moves a namespace with 1 live client connection(s)
# (IPv4 and IPv6, busy, idle, half-closed either way, plus 4 listeners)
# host1 -> host2 and back, under traffic; see lib-migrate-run.sh.
# Both migrds write their state file with every other descriptor taken
# (fault persist-emfile, as if out of descriptors): the spare one kept
# for it must carry every write, or the first vital one rolls back.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-migrd.sh"
. "$(dirname "$0")/lib-migrate.sh"
CONNS=1 RATE=20000 MIN_SOCKETS=5 SECS=30 MIG_FAULTS=persist-emfile
. "$(dirname "$0")/lib-migrate-run.sh"
