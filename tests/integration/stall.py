#!/usr/bin/env python3
"""stall.py - sockets that hold a daemon's door, for t_stalled.sh.

  stall.py hold PORT N PAYLOAD SECONDS   open N connections, send PAYLOAD
                                         (a Python bytes literal body, e.g.
                                         'DIST0000') on each, hold them
                                         SECONDS (or until killed); print
                                         how many opened, how many the
                                         daemon closed meanwhile
  stall.py burst PORT N                  N valid protocol-2 requests sent
                                         at once (a gcc -c of a tiny .i);
                                         print "ok K reset R other O"

Only 127.0.0.1.
"""
import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcc  # noqa: E402

HOST = "127.0.0.1"


def cmd_hold(port, n, payload, seconds):
    data = payload.encode("latin-1").decode("unicode_escape").encode("latin-1")
    socks, fails = [], 0
    for _ in range(n):
        try:
            s = socket.create_connection((HOST, port), timeout=5)
            if data:
                s.sendall(data)
            s.setblocking(False)
            socks.append(s)
        except OSError:
            fails += 1
    print("hold: %d open, %d failed" % (len(socks), fails), flush=True)
    end = time.time() + seconds
    closed = set()
    while time.time() < end and len(closed) < len(socks):
        live = [s for s in socks if s.fileno() not in closed]
        r, _, _ = select.select(live[:1000], [], [], 0.5)
        for s in r:
            try:
                if s.recv(4096) == b"":
                    closed.add(s.fileno())
            except OSError:
                closed.add(s.fileno())
    print("hold: the daemon closed %d of %d" % (len(closed), len(socks)),
          flush=True)
    for s in socks:
        s.close()
    return 0


def cmd_burst(port, n):
    doti = b"int f(void) { return 42; }\n"
    req = dcc.build_request(2, ["gcc", "-c", "t.c", "-o", "t.o"], doti)
    socks = []
    for _ in range(n):
        s = socket.create_connection((HOST, port), timeout=10)
        socks.append(s)
    for s in socks:            # all requests out before any reply is read
        s.sendall(req)
    ok = reset = other = 0
    for s in socks:
        data, how = dcc.read_all(s, 120)
        s.close()
        try:
            rep = dcc.parse_reply(data, 2)
            if rep["stat"] == 0 and rep["doto_wire"] > 0:
                ok += 1
            else:
                other += 1
        except ValueError:
            if how == "reset" or not data:
                reset += 1
            else:
                other += 1
    print("ok %d reset %d other %d" % (ok, reset, other))
    return 0 if ok == n else 1


def main():
    a = sys.argv[1:]
    if len(a) >= 5 and a[0] == "hold":
        return cmd_hold(int(a[1]), int(a[2]), a[3], float(a[4]))
    if len(a) == 3 and a[0] == "burst":
        return cmd_burst(int(a[1]), int(a[2]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
