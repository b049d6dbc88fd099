#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""kvc: a client of an unmodified redis-server, for the checkpoint-mode
tests.  Over CONNS persistent connections it writes keys (SET, values of
10 to 2000 random bytes) and reads back earlier ones (GET, one in four),
remembering every write the server acknowledged; at the end it reads
every acknowledged key once more.  A restarted server would have lost
them; a moved one must have them all.  It also asks INFO server at the
start and at the end: the same run_id (drawn at the server's start) and
an uptime that went on say it is the same process.

    kvc.py [-n CONNS] [-d SECONDS] [-s STOPFILE] ADDR PORT

It runs SECONDS, or until STOPFILE exists, then prints one line of
key=value and exits 0 on PASS:

    conns sets gets wrong missing resets longest_wait_ms run_id_start
    run_id_end uptime_start uptime_end verdict
"""
import argparse
import os
import random
import socket
import sys
import time


def command(*args):
    out = [b'*%d\r\n' % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b'$%d\r\n%s\r\n' % (len(a), a))
    return b''.join(out)


class Conn:
    def __init__(self, addr, port):
        self.s = socket.create_connection((addr, port), timeout=120)
        self.f = self.s.makefile('rb')

    def call(self, *args):
        self.s.sendall(command(*args))
        line = self.f.readline()
        if not line.endswith(b'\r\n'):
            raise ConnectionError('connection closed')
        kind, rest = line[:1], line[1:-2]
        if kind == b'+':
            return rest
        if kind == b'-':
            raise RuntimeError(rest.decode(errors='replace'))
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)
            if len(data) != n + 2:
                raise ConnectionError('connection closed')
            return data[:-2]
        raise RuntimeError('unexpected reply %r' % line)


def info(c):
    text = c.call('INFO', 'server').decode()
    kv = dict(l.split(':', 1) for l in text.split('\r\n') if ':' in l)
    return kv.get('run_id', '?'), int(kv.get('uptime_in_seconds', '-1'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-n', type=int, default=4)
    ap.add_argument('-d', type=float, default=60)
    ap.add_argument('-s', default=None)
    ap.add_argument('addr')
    ap.add_argument('port', type=int)
    a = ap.parse_args()
    rnd = random.Random(os.getpid())
    conns = [Conn(a.addr, a.port) for _ in range(a.n)]
    run0, up0 = info(conns[0])
    acked = {}
    sets = gets = wrong = missing = resets = 0
    longest = 0.0
    end = time.time() + a.d
    i = 0
    try:
        while time.time() < end and not (a.s and os.path.exists(a.s)):
            c = conns[i % len(conns)]
            i += 1
            t0 = time.time()
            if acked and i % 4 == 0:
                k = rnd.choice(list(acked))
                v = c.call('GET', k)
                gets += 1
                if v is None:
                    missing += 1
                elif v != acked[k]:
                    wrong += 1
            else:
                k = 'k%d' % i
                v = os.urandom(rnd.randint(5, 1000)).hex().encode()
                if c.call('SET', k, v) == b'OK':
                    acked[k] = v
                    sets += 1
            longest = max(longest, time.time() - t0)
            time.sleep(0.005)
        # every acknowledged write, once more
        for n, (k, v) in enumerate(acked.items()):
            got = conns[n % len(conns)].call('GET', k)
            gets += 1
            if got is None:
                missing += 1
            elif got != v:
                wrong += 1
        run1, up1 = info(conns[-1])
    except (OSError, ConnectionError) as e:
        resets += 1
        print('kvc: %s' % e, file=sys.stderr)
        run1, up1 = '?', -1
    ok = (resets == 0 and wrong == 0 and missing == 0 and sets > 0 and
          run0 == run1 and up1 >= up0)
    print('conns=%d sets=%d gets=%d wrong=%d missing=%d resets=%d '
          'longest_wait_ms=%d run_id_start=%s run_id_end=%s '
          'uptime_start=%d uptime_end=%d verdict=%s' %
          (len(conns), sets, gets, wrong, missing, resets, longest * 1000,
           run0, run1, up0, up1, 'PASS' if ok else 'FAIL'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
