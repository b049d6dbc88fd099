#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""tallyc: the client of tallyd.  On one connection it sends a chunk,
waits for the answers that account for it, and checks each: the
connection's count must be exactly what it sent so far, and the total
(every connection's) must never go back.  It goes on for SECONDS, or
until the file STOP exists, then prints one line of key=value:

    sent answers wrong resets first_total last_total longest_wait_ms
    verdict (PASS when nothing was wrong and the connection held)

    tallyc.py ADDR PORT SECONDS [STOP]
"""
import os
import socket
import sys
import time


def main():
    addr, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    stop = sys.argv[4] if len(sys.argv) > 4 else None
    s = socket.create_connection((addr, port), timeout=120)
    f = s.makefile('rb')
    sent = answers = wrong = resets = 0
    first = last = None
    longest = 0.0
    end = time.time() + secs
    i = 0
    try:
        while time.time() < end and not (stop and os.path.exists(stop)):
            i += 1
            chunk = bytes([65 + i % 26]) * (1 + (i * 37) % 900)
            t0 = time.time()
            s.sendall(chunk)
            sent += len(chunk)
            got = 0
            while got < len(chunk):
                line = f.readline()
                if not line:
                    raise ConnectionResetError('closed by the service')
                n, c, t = (int(x) for x in line.split())
                got += n
                answers += 1
                if c != sent - len(chunk) + got or (last is not None and
                                                    t < last):
                    wrong += 1
                first = t if first is None else first
                last = t
            longest = max(longest, time.time() - t0)
            time.sleep(0.05)
    except (ConnectionError, socket.timeout, ValueError) as e:
        resets += 1
        print('error=%s' % str(e).replace(' ', '_'), end=' ')
    verdict = 'PASS' if wrong == 0 and resets == 0 and answers else 'FAIL'
    print('sent=%d answers=%d wrong=%d resets=%d first_total=%s '
          'last_total=%s longest_wait_ms=%d verdict=%s' %
          (sent, answers, wrong, resets, first, last, longest * 1000,
           verdict))


if __name__ == '__main__':
    main()
