#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""A UDP program whose state lives in its memory and in its sockets'
queues, for checkpoint mode (lab 086).

  udpkeep.py serve PORT FLAG PEER PEERPORT
      Two sockets: one bound to PORT, one bound to PORT+1 and connected to
      PEER:PEERPORT.  Each keeps, in memory, the numbers it was sent ("n K")
      in the order they came.  Nothing is read while the file FLAG does not
      exist, so datagrams wait in the sockets' receive queues.  "q" is
      answered through the socket it came to (the connected one answers its
      peer): "token=T n=N ok=0|1 last=K", T drawn once at start, ok when the
      numbers came as 1, 2, ... N with none missing, repeated or reordered.
  udpkeep.py send HOST PORT FROM TO [SRCPORT]
      Sends "n FROM" .. "n TO-1", paced, from SRCPORT if given.
  udpkeep.py ask HOST PORT [SRCPORT]
      Sends "q" and prints the answer (retried; "none" when none came).
"""
import os
import secrets
import select
import socket
import sys
import time


def serve(port, flag, peer, peerport):
    token = secrets.token_hex(8)
    socks = []
    for p in (port, port + 1):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.bind(("0.0.0.0", p))
        socks.append(s)
    socks[1].connect((peer, peerport))
    got = {s.fileno(): [] for s in socks}
    print(f"udpkeep: token {token}, ports {port} and {port + 1}", flush=True)
    while True:
        if not os.path.exists(flag):
            # a wait, not a sleep: light mode moves a task that holds
            # sockets only while it waits for input (taskrest.h)
            select.select([], [], [], 0.05)
            continue
        ready, _, _ = select.select(socks, [], [], 0.1)
        for s in ready:
            data, src = s.recvfrom(2048)
            seen = got[s.fileno()]
            if data.startswith(b"n "):
                seen.append(int(data[2:]))
            elif data == b"q":
                ok = int(seen == list(range(1, len(seen) + 1)))
                last = seen[-1] if seen else 0
                ans = f"token={token} n={len(seen)} ok={ok} last={last}"
                if s is socks[1]:
                    s.send(ans.encode())
                else:
                    s.sendto(ans.encode(), src)


def sender(srcport):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if srcport:
        s.bind(("0.0.0.0", srcport))
    return s


def send(host, port, first, end, srcport=0):
    s = sender(srcport)
    for k in range(first, end):
        s.sendto(b"n %d" % k, (host, port))
        time.sleep(0.003)	# a virtual NIC's ring is short


def ask(host, port, srcport=0):
    s = sender(srcport)
    s.settimeout(3)
    for _ in range(5):
        s.sendto(b"q", (host, port))
        try:
            print(s.recv(2048).decode())
            return
        except socket.timeout:
            continue
    print("none")


def main():
    a = sys.argv[1:]
    if a[:1] == ["serve"] and len(a) == 5:
        serve(int(a[1]), a[2], a[3], int(a[4]))
    elif a[:1] == ["send"] and len(a) in (5, 6):
        send(a[1], int(a[2]), int(a[3]), int(a[4]),
             int(a[5]) if len(a) == 6 else 0)
    elif a[:1] == ["ask"] and len(a) in (3, 4):
        ask(a[1], int(a[2]), int(a[3]) if len(a) == 4 else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
