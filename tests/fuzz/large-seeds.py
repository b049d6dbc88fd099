#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Write seeds of sockets with large queues for fuzz_sk_json into DIR.

  tests/fuzz/large-seeds.py DIR

Too large to keep in git, they are made from the small seeds of
tests/fuzz/corpus/sk_json, the way the source sends such a socket
(migrd/migration/mig_src.c): each queue inline up to MIGR_RECORD_INLINE
(128 KiB), larger ones announced in the record ("chunks": true) and
carried by chunks of at most MIGR_CHUNK_BYTES (384 KiB); datagrams in
chunks of whole datagrams.  One record per file, its chunks on the lines
after it, as the fuzz target reads them.  tests/fuzz/run.sh sk_json
runs this on its working corpus.
"""
import base64
import json
import os
import sys

INLINE = 128 * 1024
CHUNK = 384 * 1024
HERE = os.path.dirname(os.path.abspath(__file__))


def seed(name):
    with open(os.path.join(HERE, "corpus", "sk_json", name)) as f:
        return json.loads(f.readline())


def data(n, salt):
    return bytes((i * 7 + salt) & 0xff for i in range(n))


def b64(b):
    return base64.b64encode(b).decode()


def dump(o):
    return json.dumps(o, separators=(",", ":"), sort_keys=True)


def tcp(snd, rcv, unsent):
    """An ESTABLISHED socket with snd and rcv queued bytes."""
    rec = seed("tcp-ESTABLISHED-inet.json")
    t = rec["tcp"]
    lines = []
    for part, n, salt in (("sndq", snd, 1), ("rcvq", rcv, 2)):
        q = {"len": n}
        if part == "sndq":
            q["unsent"] = unsent
        if n <= INLINE:
            q["data"] = b64(data(n, salt))
        else:
            q["chunks"] = True
            b = data(n, salt)
            for off in range(0, n, CHUNK):
                lines.append(dump({"part": part, "off": off,
                                   "data": b64(b[off:off + CHUNK])}))
        t[part] = q
    return "\n".join([dump(rec)] + lines) + "\n"


def udp(ndgrams, size):
    """A socket with ndgrams datagrams of size bytes queued, in chunks."""
    rec = seed("udp-ESTABLISHED-inet.json")
    rec["udp"] = {"dgrams": ndgrams}
    peer = {"addr": "10.77.0.10", "port": 5353}
    me = {"addr": "10.77.0.100", "port": 8080}
    lines, chunk, used = [], [], 0
    for i in range(ndgrams):
        if chunk and used + size + 64 > CHUNK:
            lines.append(dump({"part": "dgrams", "off": i - len(chunk),
                               "dgrams": chunk}))
            chunk, used = [], 0
        chunk.append({"data": b64(data(size, i)), "from": peer, "to": me})
        used += size + 64
    if chunk:
        lines.append(dump({"part": "dgrams", "off": ndgrams - len(chunk),
                           "dgrams": chunk}))
    return "\n".join([dump(rec)] + lines) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: large-seeds.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "large-inline": tcp(INLINE, INLINE, 1000),
        "large-sndq": tcp(INLINE + CHUNK + 1, 10, INLINE),
        "large-both": tcp(3 * CHUNK // 2, CHUNK + 17, 0),
        "large-dgrams": udp(300, 1400),
        "large-dgram-big": udp(40, 65507),
    }
    for name, text in seeds.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
