#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""fillecho: a client that fills an echo service's queues both ways.

  fillecho.py [-n CONNS] [-t BYTES] [-r RATE] [-b BUF] [-g GO_FILE]
              [-q QUEUE_FILE] [-d SECONDS] ADDR:PORT [ADDR:PORT]...

Each of CONNS connections (spread over the addresses, "A.B.C.D:PORT" or
"[V6]:PORT") writes BYTES of a pattern as fast as the service takes them
and reads the echo back at RATE bytes/s (0: nothing) until GO_FILE
exists, then as fast as it comes.  A connection whose reader waits fills
every queue on the way: its receive queue here, the service's send
queue, the service's buffer, its receive queue, and its send queue here.
Every byte read is checked against the pattern at its offset (8-byte
words naming the connection and the word's number), so a byte lost,
duplicated, reordered or changed anywhere is a mismatch.

Every second QUEUE_FILE gets one line: the smallest send and receive
queue (SIOCOUTQ, SIOCINQ) among the connections whose reader waits.
It ends when every byte came back (or after SECONDS) and prints:
  conns=N sent=X echoed=Y mismatches=Z resets=R longest_gap_ms=G verdict=PASS|FAIL
"""
import argparse
import fcntl
import os
import selectors
import socket
import struct
import sys
import termios
import time

SIOCINQ = termios.FIONREAD
SIOCOUTQ = termios.TIOCOUTQ


def parse(spec):
    host, _, port = spec.rpartition(":")
    return host.strip("[]"), int(port)


def pattern(conn, off, n):
    """n bytes of connection conn's stream from offset off."""
    w0, w1 = off // 8, (off + n + 7) // 8
    words = b"".join(struct.pack(">Q", (conn << 40) ^ w) for w in range(w0, w1))
    return words[off - w0 * 8:off - w0 * 8 + n]


def ioq(sock, req):
    try:
        return struct.unpack("i", fcntl.ioctl(sock, req, b"\0" * 4))[0]
    except OSError:
        return -1


class Conn:
    def __init__(self, i, addr, buf, total, rate):
        fam = socket.AF_INET6 if ":" in addr[0] else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        if buf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, buf)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buf)
        self.sock.settimeout(10)
        self.sock.connect(addr)
        self.sock.setblocking(False)
        self.i, self.total, self.rate = i, total, rate
        self.sent = self.echoed = 0
        self.allowance = 0.0
        self.dead = False
        self.last = time.monotonic()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1)
    ap.add_argument("-t", type=int, default=4 << 20)
    ap.add_argument("-r", type=int, default=0)
    ap.add_argument("-b", type=int, default=0)
    ap.add_argument("-g", default=None)
    ap.add_argument("-q", default=None)
    ap.add_argument("-d", type=float, default=600.0)
    ap.add_argument("addrs", nargs="+")
    a = ap.parse_args()
    addrs = [parse(s) for s in a.addrs]
    conns, resets, mismatches, gap = [], 0, 0, 0.0
    for i in range(a.n):
        try:
            conns.append(Conn(i, addrs[i % len(addrs)], a.b, a.t, a.r))
        except OSError as e:
            print("connect %d: %s" % (i, e), file=sys.stderr)
            resets += 1
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
    start = tick = time.monotonic()
    go = a.g is None
    while time.monotonic() - start < a.d:
        live = [c for c in conns if not c.dead and c.echoed < c.total]
        if not live:
            break
        now = time.monotonic()
        if not go and os.path.exists(a.g):
            go = True
        if now - tick >= 1.0:
            dt, tick = now - tick, now
            for c in live:
                c.allowance = min(c.allowance + c.rate * dt, 4 * max(c.rate, 1))
            if a.q and not go:
                waiting = [c for c in live if c.rate == 0] or live
                with open(a.q + ".tmp", "w") as f:
                    f.write("outq=%d inq=%d sent=%d echoed=%d\n" % (
                        min(ioq(c.sock, SIOCOUTQ) for c in waiting),
                        min(ioq(c.sock, SIOCINQ) for c in waiting),
                        sum(c.sent for c in conns), sum(c.echoed for c in conns)))
                os.replace(a.q + ".tmp", a.q)
        for key, ev in sel.select(timeout=0.2):
            c = key.data
            if c.dead:
                continue
            if ev & selectors.EVENT_WRITE and c.sent < c.total:
                n = min(65536, c.total - c.sent)
                try:
                    c.sent += c.sock.send(pattern(c.i, c.sent, n))
                except BlockingIOError:
                    pass
                except OSError as e:
                    print("conn %d: send: %s" % (c.i, e), file=sys.stderr)
                    c.dead, resets = True, resets + 1
                    continue
            if ev & selectors.EVENT_READ:
                want = 65536 if go else int(min(65536, c.allowance))
                if want <= 0:
                    continue
                try:
                    data = c.sock.recv(want)
                except BlockingIOError:
                    continue
                except OSError as e:
                    print("conn %d: recv: %s" % (c.i, e), file=sys.stderr)
                    c.dead, resets = True, resets + 1
                    continue
                if not data:
                    print("conn %d: closed by the service at %d" % (c.i, c.echoed),
                          file=sys.stderr)
                    c.dead, resets = True, resets + 1
                    continue
                t = time.monotonic()
                gap = max(gap, t - c.last)
                c.last = t
                if data != pattern(c.i, c.echoed, len(data)):
                    if mismatches == 0:
                        print("conn %d: wrong bytes at offset %d" % (c.i, c.echoed),
                              file=sys.stderr)
                    mismatches += 1
                c.echoed += len(data)
                if not go:
                    c.allowance -= len(data)
            if c.sent >= c.total and c.echoed < c.total:
                sel.modify(c.sock, selectors.EVENT_READ, c)
        # readers held back: do not spin on a readable socket
        if not go and all(c.allowance < 1 for c in live):
            time.sleep(0.05)
    sent = sum(c.sent for c in conns)
    echoed = sum(c.echoed for c in conns)
    ok = (resets == 0 and mismatches == 0 and len(conns) == a.n and
          all(c.echoed == c.total for c in conns))
    print("conns=%d sent=%d echoed=%d mismatches=%d resets=%d "
          "longest_gap_ms=%d verdict=%s" % (len(conns), sent, echoed, mismatches,
                                            resets, gap * 1000, "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
