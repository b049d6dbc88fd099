#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""tallyd: a service whose whole state is in its memory, for the
checkpoint-mode tests.  It counts the bytes each connection sent it and
all of them together, and answers each read with "N C T" and a newline
(this read, this connection so far, every connection so far), and says
on its standard output "accepted N total=T" for each connection.  A restart
would start from zero, so a client whose counts go on knows that the
process moved with its memory.  Nothing in it knows about migr: plain
sockets in an epoll loop (selectors).

    tallyd.py ADDR PORT
"""
import selectors
import socket
import sys


def main():
    sel = selectors.DefaultSelector()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((sys.argv[1], int(sys.argv[2])))
    ls.listen(64)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ, None)
    total = 0
    while True:
        for key, _ in sel.select():
            if key.data is None:
                try:
                    c, _ = ls.accept()
                except OSError:
                    continue
                accepted = getattr(main, 'accepted', 0) + 1
                main.accepted = accepted
                print('accepted %d total=%d' % (accepted, total),
                      flush=True)
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ, [0])
                continue
            c = key.fileobj
            try:
                b = c.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                b = b''
            if not b:
                sel.unregister(c)
                c.close()
                continue
            key.data[0] += len(b)
            total += len(b)
            c.setblocking(True)
            c.sendall(b'%d %d %d\n' % (len(b), key.data[0], total))
            c.setblocking(False)


if __name__ == '__main__':
    main()
