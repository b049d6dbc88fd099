#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""echoc: line echo client for line-echo services (migr-inetd + /bin/cat).

  echoc.py [-n CONNS] [-d SECONDS] [-i INTERVAL] ADDR:PORT [ADDR:PORT]...

Opens CONNS connections spread over the addresses ("A.B.C.D:PORT" or
"[V6]:PORT"), sends a numbered line on each every INTERVAL seconds for
SECONDS, reads the echoes (a line may come in pieces) and checks that
every line comes back exactly once, in order, unchanged.  Prints one
line and exits 0 on PASS:
  conns=N sent=X echoed=Y mismatches=Z resets=R longest_gap_ms=G
  most_waiting=W verdict=PASS|FAIL
most_waiting is the most lines sent and not yet echoed at any one time,
over all connections: the requests a stall held up (and, with PASS,
answered all the same).
"""
import argparse
import selectors
import socket
import sys
import time


def parse(spec):
    host, _, port = spec.rpartition(":")
    return host.strip("[]"), int(port)


class Conn:
    def __init__(self, i, addr):
        self.i = i
        self.sock = socket.create_connection(addr, timeout=10)
        self.sock.setblocking(False)
        self.sent = self.echoed = 0
        self.buf = self.out = b""
        self.last = time.monotonic()
        self.dead = False

    def line(self, k):
        return b"conn %d line %d payload %s\n" % (self.i, k, b"x" * (k % 17))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1)
    ap.add_argument("-d", type=float, default=5.0)
    ap.add_argument("-i", type=float, default=0.1)
    ap.add_argument("addrs", nargs="+")
    a = ap.parse_args()
    addrs = [parse(s) for s in a.addrs]
    sel = selectors.DefaultSelector()
    conns = []
    mismatches = resets = 0
    gap = 0.0
    most_waiting = 0
    for i in range(a.n):
        try:
            c = Conn(i, addrs[i % len(addrs)])
        except OSError as e:
            print("connect %d: %s" % (i, e), file=sys.stderr)
            resets += 1
            continue
        conns.append(c)
        sel.register(c.sock, selectors.EVENT_READ, c)
    start = time.monotonic()
    end = start + a.d
    nxt = start
    # after the last line, wait (10 s at most) for the echoes
    while True:
        now = time.monotonic()
        if now >= nxt and now < end:
            for c in conns:
                if not c.dead:
                    c.out += c.line(c.sent)
                    c.sent += 1
            nxt += a.i
            most_waiting = max(most_waiting,
                               sum(c.sent - c.echoed for c in conns
                                   if not c.dead))
        for c in conns:
            if c.out and not c.dead:
                try:
                    c.out = c.out[c.sock.send(c.out):]
                except BlockingIOError:
                    pass
                except OSError as e:
                    print("send %d: %s" % (c.i, e), file=sys.stderr)
                    c.dead = True
                    resets += 1
                    sel.unregister(c.sock)
        live = [c for c in conns if not c.dead]
        if now >= end and all(c.echoed == c.sent for c in live):
            break
        if now >= end + 10:
            break
        for key, _ in sel.select(timeout=0.02):
            c = key.data
            try:
                data = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as e:
                print("recv %d: %s" % (c.i, e), file=sys.stderr)
                data = None
            if not data:
                if data is not None:
                    print("recv %d: EOF" % c.i, file=sys.stderr)
                c.dead = True
                resets += 1
                sel.unregister(c.sock)
                continue
            t = time.monotonic()
            gap = max(gap, t - c.last)
            c.last = t
            c.buf += data
            while b"\n" in c.buf:
                got, c.buf = c.buf.split(b"\n", 1)
                want = c.line(c.echoed).rstrip(b"\n")
                if got != want or c.echoed >= c.sent:
                    mismatches += 1
                    print("conn %d: got %r, want %r" % (c.i, got, want),
                          file=sys.stderr)
                c.echoed += 1
    sent = sum(c.sent for c in conns)
    echoed = sum(c.echoed for c in conns)
    missing = sum(c.sent - c.echoed for c in conns) + sum(len(c.buf) > 0 for c in conns)
    ok = (len(conns) == a.n and mismatches == 0 and resets == 0
          and missing == 0 and sent > 0)
    print("conns=%d sent=%d echoed=%d mismatches=%d resets=%d "
          "longest_gap_ms=%d most_waiting=%d verdict=%s" % (len(conns),
          sent, echoed, mismatches, resets, gap * 1000, most_waiting,
          "PASS" if ok else "FAIL"))
    for c in conns:
        c.sock.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
