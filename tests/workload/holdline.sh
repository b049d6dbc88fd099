#!/bin/sh
# SPDX-License-Identifier: ISC
# holdline.sh FILE: a line filter that holds each line a while before it
# writes it back, for migr-inetd (stdin and stdout are the connection).
# FILE holds the seconds to hold a line ("0.3"), read once at the start;
# "cat" makes it /bin/cat instead; "once SECONDS" holds one line, writes
# it back and closes.  While it holds a line, the line is
# read (acknowledged to the client) and not written: the task sleeps in
# /bin/sleep, and a freeze then would take the line with it.
IFS= read -r hold <"$1" || exit 1
[ "$hold" = cat ] && exec /bin/cat
# "once SECONDS": one line, held, written back, and the connection closed
case $hold in
once\ *)
	IFS= read -r l || exit 0
	/bin/sleep "${hold#once }"
	printf '%s\n' "$l"
	exit 0 ;;
esac
while IFS= read -r l; do
	/bin/sleep "$hold"
	printf '%s\n' "$l"
done
