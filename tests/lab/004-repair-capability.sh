#!/usr/bin/env bash
# SPDX-License-Identifier: ISC
# TCP_REPAIR is usable by root in a guest and refused (EPERM) once
# CAP_NET_ADMIN is dropped.
. "$(dirname "$0")/../lib.sh"

probe=$B/tests/tools/repair-probe
for g in host1 host2; do
	is "$(gx "$g" "$probe")" ok "$g: root may set TCP_REPAIR"
	is "$(gx "$g" "$probe --drop-net-admin")" EPERM \
		"$g: TCP_REPAIR without CAP_NET_ADMIN fails with EPERM"
	is "$(gx "$g" "setpriv --reuid=65534 --regid=65534 --clear-groups $probe")" EPERM \
		"$g: TCP_REPAIR as an unprivileged user fails with EPERM"
done
done_testing
