#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Where a peer's stall went, from a capture taken at the peer.

    flowgaps.py CAPTURE.pcap PORT[,PORT...] [DOWNTIME_MS]

CAPTURE is a classic pcap (tcpdump -w, Ethernet or Linux cooked) taken
on the client during one move; PORT are the service's TCP ports.  The
move's dark window is the longest time in which no connection got a
segment carrying data from the service:

    last   the last such segment before it: the lock cannot have come
           earlier, since data was still flowing
    first  the first after it: the service was back by then

and each connection's stall across it (its last data before, its
first after) splits into

    phase  last - its own "before": how long before the lock it had
           last been written to (the workload's tick, not the move)
    dark   first - last: the window no connection saw data in
    serve  its own "after" - first: how long after the first
           connection it was served again (a restored socket sends
           what its queue held once it is out of repair, before the
           program is released, so the first is usually the kernel's)

and "without its phase" is the longest dark + serve: the stall the
move made, less how long before the lock the workload had last
written (up to its tick).

Prints the split as min / median / max over the connections, the
dark window against DOWNTIME_MS if given, and what the peer did in the
dark: its own data segments sent again (a sequence it had sent
before), resets either way.  Asserts nothing; a bench's helper.
"""
import struct
import sys


def packets(path):
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            end = "<"
        else:
            end = ">"
            magic = struct.unpack(">I", head[:4])[0]
        nano = magic == 0xA1B23C4D
        link = struct.unpack(end + "I", head[20:24])[0]
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, _ = struct.unpack(end + "IIII", rec)
            data = f.read(incl)
            if len(data) < incl:
                return
            t = sec + frac / (1e9 if nano else 1e6)
            yield t, link, data


def tcp_of(link, data):
    """(src, sport, dst, dport, seq, flags, payload length) or None."""
    if link == 1:           # Ethernet
        off, etype = 14, struct.unpack(">H", data[12:14])[0]
    elif link == 113:       # Linux cooked (tcpdump -i any)
        off, etype = 16, struct.unpack(">H", data[14:16])[0]
    else:
        return None
    if etype == 0x0800 and len(data) >= off + 20:
        ihl = (data[off] & 0x0F) * 4
        if data[off + 9] != 6:
            return None
        total = struct.unpack(">H", data[off + 2:off + 4])[0]
        src, dst = data[off + 12:off + 16], data[off + 16:off + 20]
        tcp, iplen = off + ihl, total - ihl
    elif etype == 0x86DD and len(data) >= off + 40:
        if data[off + 6] != 6:
            return None
        iplen = struct.unpack(">H", data[off + 4:off + 6])[0]
        src, dst = data[off + 8:off + 24], data[off + 24:off + 40]
        tcp = off + 40
    else:
        return None
    if len(data) < tcp + 14:
        return None
    sport, dport, seq = struct.unpack(">HHI", data[tcp:tcp + 8])
    doff = (data[tcp + 12] >> 4) * 4
    flags = data[tcp + 13]
    return src, sport, dst, dport, seq, flags, iplen - doff


def spread(xs):
    if not xs:
        return "-"
    xs = sorted(xs)
    return "%.1f / %.1f / %.1f" % (xs[0], xs[len(xs) // 2], xs[-1])


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: flowgaps.py CAPTURE.pcap PORT[,PORT...] [DOWNTIME_MS]")
    ports = {int(p) for p in sys.argv[2].split(",")}
    down = float(sys.argv[3]) if len(sys.argv) > 3 else None
    rx = {}                 # flow -> times of data from the service
    sent = {}               # flow -> highest sequence the peer sent (end)
    again, resets = [], 0
    for t, link, data in packets(sys.argv[1]):
        p = tcp_of(link, data)
        if p is None:
            continue
        src, sport, dst, dport, seq, flags, plen = p
        if flags & 0x04 and (sport in ports or dport in ports):
            resets += 1
        if sport in ports and plen > 0:
            rx.setdefault((dst, dport, src, sport), []).append(t)
        elif dport in ports and plen > 0:
            flow = (src, sport, dst, dport)
            hi, end = sent.get(flow), (seq + plen) & 0xFFFFFFFF
            if hi is not None and 0 < ((hi - seq) & 0xFFFFFFFF) < 0x80000000:
                again.append(t)     # starts below what it had sent
            if hi is None or 0 < ((end - hi) & 0xFFFFFFFF) < 0x80000000:
                sent[flow] = end
    every = sorted(t for ts in rx.values() for t in ts)
    if len(every) < 2:
        sys.exit("flowgaps: no connection got data from ports %s" % sys.argv[2])
    # the move: the longest time in which no connection got data
    k = max(range(1, len(every)), key=lambda i: every[i] - every[i - 1])
    last, first = every[k - 1], every[k]
    ms = 1000.0
    longest, phase, serve, stall = [], [], [], []
    for ts in rx.values():
        longest.append(max((b - a for a, b in zip(ts, ts[1:])), default=0))
        before = [t for t in ts if t <= last]
        after = [t for t in ts if t >= first]
        if not before or not after:
            continue        # began or ended in the move
        phase.append((last - before[-1]) * ms)
        serve.append((after[0] - first) * ms)
        stall.append((after[0] - before[-1]) * ms)
    print("connections %d, longest stall %.1f ms, median %.1f ms" % (
        len(rx), max(longest) * ms, sorted(longest)[len(longest) // 2] * ms))
    if not stall:
        sys.exit("flowgaps: no connection got data both before and after "
                 "the dark window")
    print("dark window (no connection got data) %.1f ms%s" % (
        (first - last) * ms,
        "" if down is None else ", downtime %.1f ms, dark - downtime %+.1f ms"
        % (down, (first - last) * ms - down)))
    print("phase (written last before the lock) min/median/max: %s ms" %
          spread(phase))
    print("serve (served after the first one)   min/median/max: %s ms" %
          spread(serve))
    print("stall across the dark window, longest %.1f ms%s" % (
        max(stall), "" if down is None else
        ", minus the downtime %+.1f ms" % (max(stall) - down)))
    moved = (first - last) * ms + max(serve)
    print("the same without its phase (the dark window and the serve) "
          "%.1f ms%s" % (moved, "" if down is None else
                         ", minus the downtime %+.1f ms" % (moved - down)))
    dark = [x for x in again if last <= x <= first + 1.0]
    print("peer's data sent again in the dark or within 1 s after: %d; "
          "resets: %d" % (len(dark), resets))


if __name__ == "__main__":
    main()
