#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Carry the peer and control seeds over to a new protocol version.

    tests/fuzz/reframe.py [--from OLD] VERSION [SEED...]
                          (default: every seed of corpus/peer and
                          corpus/control; OLD: VERSION - 1)

A seed of lines gets "version":OLD in a hello replaced; a wire seed ('W'
and then frames: type, version, length, all big-endian, and the JSON)
gets each frame's version replaced, and its hello's too, with the
lengths made right.  A frame whose version is deliberately another one
than the old (wire-bad tests that) is left alone.
"""
import glob
import os
import re
import struct
import sys


def hello_version(payload, old, new):
    return re.sub(rb'"version":%d\b' % old, b'"version":%d' % new, payload)


def reframe_wire(data, old, new):
    out, i = bytearray(b'W'), 1
    while i + 8 <= len(data):
        typ, ver, ln = struct.unpack('!HHI', data[i:i + 8])
        payload = data[i + 8:i + 8 + ln]
        if len(payload) < ln:           # a partial frame: as it is
            out += data[i:]
            return bytes(out)
        if ver == old:
            ver = new
            payload = hello_version(payload, old, new)
        out += struct.pack('!HHI', typ, ver, len(payload)) + payload
        i += 8 + ln
    out += data[i:]
    return bytes(out)


def main():
    args = sys.argv[1:]
    old = None
    if args[:1] == ['--from']:
        old = int(args[1])
        args = args[2:]
    new = int(args[0])
    if old is None:
        old = new - 1
    top = os.path.dirname(os.path.abspath(__file__))
    seeds = args[1:] or sorted(
        glob.glob(os.path.join(top, 'corpus/peer/*')) +
        glob.glob(os.path.join(top, 'corpus/control/*')))
    for f in seeds:
        data = open(f, 'rb').read()
        if data[:1] == b'W':
            out = reframe_wire(data, old, new)
        else:
            out = hello_version(data, old, new)
        if out != data:
            open(f, 'wb').write(out)
            print('reframed', os.path.relpath(f, top))


main()
