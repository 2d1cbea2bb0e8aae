#!/usr/bin/env python3
"""muxdrive.py - drive `boltccd --mux` on its stdin/stdout with good and
hostile frames (doc/PROTOCOL.md, "Stream multiplexing").

    python3 muxdrive.py BOLTCCD [boltccd options...]

Runs each case against a fresh `BOLTCCD --mux --log-stderr OPTIONS...`
and prints one line per check, "ok ..." or "FAIL ...".  Exit status 1 if
any check failed.  Used by t_ssh.sh.
"""
import os
import select
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcc  # noqa: E402  (request builder)

OPEN, DATA, EOF, RESET, CREDIT, GOAWAY = 1, 2, 3, 4, 5, 6
FAILED = []


def hello(streams=16, window=262144, version=1, payload=32768):
    return b"BOLTMUX1" + struct.pack(">IIII", version, payload, streams,
                                     window)


def frame(ftype, stream, payload=b"", length=None):
    n = len(payload) if length is None else length
    return struct.pack(">IIB3x", stream, n, ftype) + payload


class Mux:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv + ["--mux", "--log-stderr"],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.buf = b""
        self.frames = []
        self.peer_hello = None

    def send(self, data):
        try:
            self.p.stdin.write(data)
            self.p.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def pump(self, until, timeout=30.0):
        """Read frames until until(self) is true, EOF or timeout."""
        end = time.time() + timeout
        fd = self.p.stdout.fileno()
        while not until(self):
            left = end - time.time()
            if left <= 0:
                return False
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return until(self)
            self.buf += chunk
            if self.peer_hello is None and len(self.buf) >= 24:
                self.peer_hello = self.buf[:24]
                self.buf = self.buf[24:]
            while self.peer_hello is not None and len(self.buf) >= 12:
                sid, n, ftype = struct.unpack(">IIB", self.buf[:9])
                if len(self.buf) < 12 + n:
                    break
                self.frames.append((ftype, sid, self.buf[12:12 + n]))
                self.buf = self.buf[12 + n:]
        return True

    def has(self, ftype, sid=None):
        return any(f[0] == ftype and (sid is None or f[1] == sid)
                   for f in self.frames)

    def data(self, sid):
        return b"".join(f[2] for f in self.frames
                        if f[0] == DATA and f[1] == sid)

    def reason(self, ftype, sid=None):
        for f in self.frames:
            if f[0] == ftype and (sid is None or f[1] == sid):
                return f[2].decode("ascii", "replace")
        return ""

    def finish(self, timeout=20.0):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        err = self.p.stderr.read().decode("utf-8", "replace")
        self.p.stdout.close()
        self.p.stderr.close()
        return rc, err


def check(label, cond, detail=""):
    if cond:
        print("ok   %s" % label)
    else:
        print("FAIL %s %s" % (label, detail))
        FAILED.append(label)


def good_request():
    return dcc.req_with()


def case_mixed(argv):
    """Good stream 1 completes while streams 3 and 5 are broken."""
    m = Mux(argv)
    m.send(hello())
    m.pump(lambda s: s.peer_hello is not None, 10)
    check("mux greeting from boltccd --mux",
          m.peer_hello is not None and m.peer_hello[:8] == b"BOLTMUX1",
          repr(m.peer_hello))
    m.send(frame(OPEN, 1) + frame(DATA, 1, good_request()))
    # stream 3: far more than one window, without waiting for credit
    junk = b"x" * 32768
    m.send(frame(OPEN, 3) + b"".join(frame(DATA, 3, junk)
                                     for _ in range(10)))
    # stream 5: data after its end of data
    m.send(frame(OPEN, 5) + frame(EOF, 5) + frame(DATA, 5, b"late"))
    m.pump(lambda s: s.has(EOF, 1) and s.has(RESET, 3) and s.has(RESET, 5))
    rep = m.data(1)
    check("mixed: good stream 1 answered with a distcc reply",
          rep[:4] == b"DONE" and b"DOTO" in rep, repr(rep[:40]))
    check("mixed: stream 1 ended with EOF", m.has(EOF, 1))
    check("mixed: flooded stream 3 reset (%s)" % m.reason(RESET, 3),
          m.has(RESET, 3))
    check("mixed: data after end of data resets stream 5 (%s)"
          % m.reason(RESET, 5),
          m.has(RESET, 5) and "after end" in m.reason(RESET, 5))
    check("mixed: no GOAWAY", not m.has(GOAWAY))
    m.send(frame(EOF, 1))
    rc, err = m.finish()
    check("mixed: exit 0 when the client closes (rc %s)" % rc, rc == 0,
          err[-300:])
    check("mixed: reason logged", "data after end of data" in err,
          err[-300:])


def case_fatal(argv, label, data, want, hello_first=True):
    m = Mux(argv)
    if hello_first:
        m.send(hello())
    m.send(data)
    m.pump(lambda s: s.has(GOAWAY), 10)
    rc, err = m.finish()
    check("%s: connection failed cleanly (rc %s, not a signal)"
          % (label, rc), rc == 1, err[-300:])
    check("%s: logged with the reason (%s)" % (label, want), want in err,
          err[-300:])
    if hello_first:
        check("%s: GOAWAY sent (%s)" % (label, m.reason(GOAWAY)),
              m.has(GOAWAY))


def case_too_many(argv):
    m = Mux(argv + ["--jobs", "1", "--queue", "1"])
    m.send(hello())
    m.pump(lambda s: s.peer_hello is not None, 10)
    streams = struct.unpack(">I", m.peer_hello[16:20])[0] \
        if m.peer_hello else 0
    check("limits: greeting announces --jobs + --queue streams (%d)"
          % streams, streams == 2)
    m.send(frame(OPEN, 1) + frame(OPEN, 2) + frame(OPEN, 3))
    m.pump(lambda s: s.has(RESET, 3), 10)
    check("limits: stream over the limit reset (%s)" % m.reason(RESET, 3),
          "too many streams" in m.reason(RESET, 3))
    check("limits: the others are not", not m.has(RESET, 1)
          and not m.has(RESET, 2) and not m.has(GOAWAY))
    rc, err = m.finish()
    check("limits: exit 0 (rc %s)" % rc, rc == 0, err[-300:])


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    argv = sys.argv[1:]
    case_mixed(argv)
    case_too_many(argv)
    case_fatal(argv, "oversized frame",
               frame(OPEN, 1) + frame(DATA, 1, length=0x7fffffff),
               "bytes (limit")
    case_fatal(argv, "unknown frame type", frame(9, 1), "unknown mux frame")
    case_fatal(argv, "duplicate stream id", frame(OPEN, 1) + frame(OPEN, 1),
               "reused")
    case_fatal(argv, "frame for a stream never opened",
               frame(DATA, 7, b"x"), "unknown stream")
    case_fatal(argv, "bad greeting", good_request(), "not a mux greeting",
               hello_first=False)
    case_fatal(argv, "greeting of another version", hello(version=2),
               "mux version", hello_first=False)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
