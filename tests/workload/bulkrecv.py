#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A receiver of a bulk stream that records its pace, for the after-move
benchmark (tests/bench/after-move.sh).

  bulkrecv.py HOST PORT SECONDS OUT
      Connects to HOST:PORT, reads as fast as the bytes come for SECONDS
      and writes to OUT one line every 20 ms: the monotonic time in
      seconds and the bytes read so far.  It counts bytes and does not
      check them: the lab tests verify, this measures.
"""
import socket
import sys
import time


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    host, port, secs, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.connect((host, port))
    s.settimeout(0.02)
    total, lines = 0, []
    t0 = time.monotonic()
    next_mark = t0
    while True:
        now = time.monotonic()
        if now >= next_mark:
            lines.append("%.3f %d" % (now, total))
            next_mark += 0.02
        if now - t0 >= secs:
            break
        try:
            b = s.recv(1 << 20)
        except socket.timeout:
            continue
        if not b:
            break
        total += len(b)
    s.close()
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
