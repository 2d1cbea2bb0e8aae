#!/usr/bin/env python3
"""liveness.py - a daemon frees the slot of a client that went away.

  liveness.py --build DIR [--io-timeout S]

One boltccd host (profile lo: no relay between the client and the
daemon, so the daemon's socket faces the client's own TCP).  A client in
the client namespace opens a job connection, sends the first bytes of a
distcc request and then nothing, as a client does whose machine froze or
whose link died mid-upload.  Checks:

  * with the link up, the silent client keeps its worker past the
    keepalive idle time plus one probe (the probes are answered: a slow
    client is not a dead one);
  * once the host's link is cut, the worker is gone well before the
    daemon's --io-timeout (120 s here): keepalive probes go unanswered.

Exit status: 0 pass, 1 fail, 77 cannot run here (not root, no netns).
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cluster  # noqa: E402

KEEP_IDLE_S = 5		# common/io.h BC_TCP_KEEPIDLE_S
KEEP_INTVL_S = 2	# BC_TCP_KEEPINTVL_S
KEEP_CNT = 3		# BC_TCP_KEEPCNT


def log(msg):
    print("liveness: %s" % msg, flush=True)


def children(pid):
    """Pids whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces
        fields = st[st.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def wait_for(cond, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--io-timeout", type=int, default=120)
    a = p.parse_args()
    why = cluster.can_run()
    if why is not None:
        log("skip: %s" % why)
        return 77
    fails = 0
    # --no-cache: no cache keeper, so the daemon's only long-lived child
    # is the worker of our connection
    with cluster.Cluster(hosts=1, slots=2, profile="lo", build=a.build,
                         daemon_args=["--io-timeout", str(a.io_timeout),
                                      "--no-cache"],
                         log_level="debug") as c:
        h = c.hosts[0]
        dpid = h["pid"]
        base = set(children(dpid))
        # the first 24 bytes of a protocol 1 request, then silence
        code = ("import socket,time\n"
                "s=socket.create_connection((%r,%d),timeout=5)\n"
                "s.sendall(b'DIST00000001ARGC00000002')\n"
                "time.sleep(600)\n" % (h["addr"], c.port))
        cl = c.popen_client([sys.executable, "-c", code])
        try:
            # the request is not whole: the daemon holds the connection
            # itself (daemon/intake.h), no worker
            def reading():
                try:
                    return c.stats(0).get("connections_reading", -1)
                except (cluster.ClusterError, ValueError):
                    return -1
            if not wait_for(lambda: reading() == 1, 15):
                log("FAIL: the daemon does not hold the connection "
                    "(connections_reading %s)" % reading())
                return 1
            kept = [p for p in set(children(dpid)) - base
                    if cluster.pid_alive(p)]
            if kept:
                log("FAIL: a worker %s took a request that is not whole"
                    % kept)
                fails += 1
            quiet = KEEP_IDLE_S + KEEP_INTVL_S + 1
            time.sleep(quiet)
            if reading() == 1:
                log("ok: a silent client with its link up is kept after "
                    "%d s" % quiet)
            else:
                log("FAIL: a live, silent client was dropped within %d s"
                    % quiet)
                fails += 1
            dlog = os.path.join(c.state, h["name"], "boltccd.log")
            c.link(0, False)
            t0 = time.monotonic()
            limit = KEEP_IDLE_S + KEEP_INTVL_S * KEEP_CNT + 10

            def gone():
                try:
                    with open(dlog, errors="replace") as f:
                        return "gone after 24 bytes, before a whole " \
                            "request" in f.read()
                except OSError:
                    return False
            ok = wait_for(gone, limit + 5)
            dt = time.monotonic() - t0
            if ok and dt <= limit:
                log("ok: link cut, the daemon let the connection go after "
                    "%.1f s (--request-timeout 120 s)" % dt)
            else:
                log("FAIL: link cut, the connection %s after %.1f s "
                    "(limit %d s)" % ("went" if ok else "still there", dt,
                                      limit))
                fails += 1
            c.link(0, True)
            if not wait_for(lambda: reading() == 0, 10):
                log("FAIL: the daemon still holds %s connection(s)"
                    % reading())
                fails += 1
            if not c.alive(0):
                log("FAIL: the daemon itself died")
                fails += 1
        finally:
            cl.kill()
            cl.wait()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
