#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""slowacc: a service slow to accept, and its client.

  slowacc.py serve PORT DELAY     accept one connection every DELAY s,
                                  greet it ("hi N"), keep it open
  slowacc.py client ADDR PORT N   open N connections at once, print the
                                  greetings on one line, then hold them

With a DELAY longer than a move's wait at its gate, connections sit in
the listener's accept queue when the move starts.
"""
import socket
import sys
import time


def serve(port, delay):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", port))
    s.listen(16)
    conns = []
    while True:
        time.sleep(delay)
        c, _ = s.accept()
        conns.append(c)
        c.sendall(b"hi %d\n" % len(conns))


def client(addr, port, n):
    cs = [socket.create_connection((addr, port), timeout=300) for _ in range(n)]
    print(" ".join(c.makefile().readline().strip() for c in cs), flush=True)
    time.sleep(3600)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), float(sys.argv[3]))
    else:
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
