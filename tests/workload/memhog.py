#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""memhog: a program whose state is its memory, for checkpoint benchmarks.

  memhog.py -m MIB [-w MIB_PER_S] [-p PORT]

Holds MIB mebibytes in one buffer of 4 KiB pages, each holding its
number, how many times it was written (its generation, kept in a second
array), and 4 KiB of a 1 MiB random block from an offset both choose
(incompressible: the channel's deflate cannot shrink it), and writes
-w MiB/s of pages picked at random (0: none), as a program at work
dirties its memory.  On each TCP connection to PORT it answers one line:

  ok pages=N writes=W resident_mib=R      every page as its generation says
  bad page=P                              a page that is not

and closes, so a client can tell, after a move, that every byte of the
memory came along (and that the writes went on: W grows).
"""
import argparse
import random
import socket
import struct
import threading
import time

PAGE = 4096
BLOCK = random.Random(1).randbytes(1 << 20)


def content(page, gen):
    off = (page * 2654435761 + gen * 40503) % (len(BLOCK) - PAGE)
    return struct.pack("<II", page, gen) + BLOCK[off:off + PAGE - 8]


class Memory:
    def __init__(self, mib):
        self.n = mib * 256
        self.buf = bytearray(self.n * PAGE)
        self.gen = bytearray(self.n)     # generations, mod 256
        self.writes = 0
        self.lock = threading.Lock()
        for p in range(self.n):
            self.fill(p)

    def fill(self, p):
        self.buf[p * PAGE:(p + 1) * PAGE] = content(p, self.gen[p])

    def dirty(self, count):
        with self.lock:
            for _ in range(count):
                p = random.randrange(self.n)
                self.gen[p] = (self.gen[p] + 1) % 256
                self.fill(p)
                self.writes += 1

    def check(self):
        with self.lock:
            mv = memoryview(self.buf)
            for p in range(self.n):
                if mv[p * PAGE:(p + 1) * PAGE] != content(p, self.gen[p]):
                    return "bad page=%d" % p
            return "ok pages=%d writes=%d resident_mib=%d" % (
                self.n, self.writes, resident_mib())


def resident_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1


def writer(mem, rate):
    per_tick = max(1, int(rate * 256 / 10))
    while True:
        time.sleep(0.1)
        mem.dirty(per_tick)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-m", type=int, required=True)
    ap.add_argument("-w", type=float, default=0.0)
    ap.add_argument("-p", type=int, default=7600)
    a = ap.parse_args()
    mem = Memory(a.m)
    if a.w > 0:
        threading.Thread(target=writer, args=(mem, a.w), daemon=True).start()
    srv = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("::", a.p))
    srv.listen(16)
    print("memhog: %d MiB in %d pages, writing %.1f MiB/s, port %d" %
          (a.m, mem.n, a.w, a.p), flush=True)
    while True:
        c, _ = srv.accept()
        try:
            c.sendall((mem.check() + "\n").encode())
        except OSError:
            pass
        c.close()


if __name__ == "__main__":
    main()
