#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""sockprobe: hold a socket in a state a migration must refuse.

  sockprobe.py urgent-server PORT      accept one connection, never read
  sockprobe.py urgent-client ADDR PORT connect, send b"ab" then b"!" as
                                       urgent data (MSG_OOB), stay
  sockprobe.py md5 PORT PEER           listen on PORT with a TCP_MD5SIG
                                       key for PEER (an IPv4 address)
  sockprobe.py mcast GROUP [IFNAME]    join the IPv4 multicast GROUP on
                                       a UDP socket, on IFNAME (eth0)

Each prints "ready" once its socket is in that state (urgent-server
prints "listening" first, before its client comes), then sleeps until
killed, holding it.  Run the server side in the namespace under test
(migctl run NS -- sockprobe.py ...), the client side anywhere.
"""
import socket
import struct
import sys
import time

TCP_MD5SIG = 14          # linux/tcp.h


def hold(*socks):
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def urgent_server(port):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", int(port)))
    s.listen(4)
    print("listening", flush=True)
    c, _ = s.accept()
    hold(s, c)


def urgent_client(addr, port):
    c = socket.create_connection((addr, int(port)), timeout=10)
    c.send(b"ab")
    c.send(b"!", socket.MSG_OOB)
    hold(c)


def md5(port, peer):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", int(port)))
    key = b"migr-test-key"
    # struct tcp_md5sig: sockaddr_storage (128), flags, prefixlen,
    # keylen, ifindex, key[80]
    addr = struct.pack("=HH4s", socket.AF_INET, 0, socket.inet_aton(peer))
    arg = struct.pack("=128sBBHi80s", addr, 0, 0, len(key), 0, key)
    s.setsockopt(socket.IPPROTO_TCP, TCP_MD5SIG, arg)
    s.listen(4)
    hold(s)


def mcast(group, ifname="eth0"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 7600))
    # struct ip_mreqn: by interface index, so no multicast route is needed
    mreq = struct.pack("=4s4si", socket.inet_aton(group),
                       socket.inet_aton("0.0.0.0"),
                       socket.if_nametoindex(ifname))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    hold(s)


MODES = {"urgent-server": urgent_server, "urgent-client": urgent_client,
         "md5": md5, "mcast": mcast}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MODES:
        sys.exit(__doc__)
    MODES[sys.argv[1]](*sys.argv[2:])
