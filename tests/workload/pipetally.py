#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""pipetally: two ends of a pipe, for the checkpoint-mode tests of a
process tree ("sh -c 'pipetally.py produce | pipetally.py serve PORT'":
a shell and its two children, a pipe between them).

    pipetally.py produce        prints 1, 2, 3, ... one line every 20 ms
    pipetally.py serve PORT     reads those lines and counts the gaps (a
                                number that is not the last one plus 1);
                                each connection to PORT gets one line,
                                "last=N lines=L gaps=G", and is closed

Both keep their state in memory only: after a move, a last number that
went on and no gap say the tree moved whole, the bytes in the pipe with
it.
"""
import itertools
import os
import selectors
import socket
import sys
import time


def produce():
    for i in itertools.count(1):
        sys.stdout.write('%d\n' % i)
        sys.stdout.flush()
        time.sleep(0.02)


def serve(port):
    sel = selectors.DefaultSelector()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('0.0.0.0', port))
    ls.listen(16)
    sel.register(ls, selectors.EVENT_READ, 'listen')
    sel.register(0, selectors.EVENT_READ, 'pipe')
    last = lines = gaps = 0
    buf = b''
    while True:
        for key, _ in sel.select():
            if key.data == 'pipe':
                data = os.read(0, 65536)
                if not data:
                    return
                buf += data
                *done, buf = buf.split(b'\n')
                for line in done:
                    n = int(line)
                    if n != last + 1:
                        gaps += 1
                    last = n
                    lines += 1
            else:
                c, _ = ls.accept()
                c.sendall(b'last=%d lines=%d gaps=%d\n' % (last, lines, gaps))
                c.close()


if __name__ == '__main__':
    if sys.argv[1] == 'produce':
        produce()
    else:
        serve(int(sys.argv[2]))
