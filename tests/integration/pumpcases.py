#!/usr/bin/env python3
"""pumpcases.py - hostile pump manifests, sent to a daemon in distcc
protocol 3 and in BOLT pump (doc/PROTOCOL.md "BOLT pump").

  pumpcases.py list
  pumpcases.py run PROTO CASE PORT BASE [--timeout N]
  pumpcases.py seeds DIR BASE      BOLT pump manifests for tests/fuzz/seeds/pumpx

PROTO is p3 or bolt.  BASE is an absolute directory of the test's own: the
job's client paths are BASE/src/..., and the cases aim at BASE/canary (a
directory the test made, holding secret.h) and BASE/src (the client's
source directory, on the same machine as the daemon here).  A good job
is the case "good".  `run` prints one line:

  CASE PROTO: refused (EROR <text>)      BOLT refusal with its reason
  CASE PROTO: refused (closed)           protocol 3: closed without a reply
  CASE PROTO: answered STAT <hex>        the job ran
and exits 0 when refused, 1 when answered, 2 on a timeout.
"""
import hashlib
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcc  # noqa: E402

pkt, pstr = dcc.pkt, dcc.pstr
MARKER = "forcing_technique_271828"
SECRET = b"#define SECRET 42\n"


def sysdir(name):
    """distcc's system-directory link target for NAME."""
    return "../" * (20 + name.count("/")) + name[1:]


def good_src():
    return b"int a(void) { return 1; }\n"


def cases(base):
    """name -> dict(ents=[(name, kind, data)], argv=, cdir=, nfil=, only=)
    kind: F file (bytes), L link (target), D directory (BOLT DIRM; a
    marker file in protocol 3)."""
    S = base + "/src"
    C = base + "/canary"
    a = (S + "/a.c", "F", good_src())
    mk = (S + "/" + MARKER, "F", b"")
    argv = ["gcc", "-c", "a.c", "-o", "a.o"]
    deep = S + "/d" * 40        # 40 levels below S: room for 40 '..'
    depth_s = S.count("/")
    out = {
        "good": [],
        # names
        "name-dotdot": [(S + "/../canary/pwned", "F", b"x")],
        "name-dotdot-inside": [(S + "/inc/../h.h", "F", b"x")],
        "name-dot": [(S + "/./h.h", "F", b"x")],
        "name-relative": [("src/h.h", "F", b"x")],
        "name-empty-component": [(S + "//h.h", "F", b"x")],
        "name-trailing-slash": [(S + "/h.h/", "F", b"x")],
        "name-root": [("/", "F", b"x")],
        "name-newline": [(S + "/a\nb.h", "F", b"x")],
        "name-escape-byte": [(S + "/a\x1b[31mb.h", "F", b"x")],
        "name-nul": [(S + "/a\0b.h", "F", b"x")],
        "name-long-component": [(S + "/" + "x" * 256, "F", b"x")],
        "name-too-long": [("/" + "x/" * 2100 + "h.h", "F", b"x")],
        "name-too-deep": [(S + "/d" * 300 + "/h.h", "F", b"x")],
        # links
        "link-rel-escape": [(S + "/l", "L", "../" * 60 + C[1:])],
        "link-abs-dotdot": [(S + "/l", "L", "/../../../../.." + C)],
        "link-abs-dotdot-inside": [(S + "/l", "L", S + "/x/../a.c")],
        "link-rel-dotdot-inside": [(S + "/l", "L", "x/../a.c")],
        "link-control-byte": [(S + "/l", "L", "a\nc")],
        # lexically inside, physically out: 'up' is the root, then 40 '..'
        # climb past it to /, and the rest names the canary
        "link-chain-escape": [(deep + "/up", "L",
                               "/".join([".."] * (deep.count("/") - 1))),
                              (deep + "/out", "L", "up/" + "../" * 40 + C[1:]),
                              (S + "/use.c", "F",
                               b'#include "' + ("d/" * 40).encode() +
                               b'out/secret.h"\nint s = SECRET;\n')],
        # distcc's system-directory link, but to a file
        "link-sysdir-file": [(C + "/secret.h", "L", sysdir(C + "/secret.h")),
                             (S + "/b.c", "F",
                              b'#include "../canary/secret.h"\nint s = SECRET;\n')],
        # into the system-directory window through a link of the tree
        "link-into-sysdir": [(C, "L", sysdir(C)),
                             (S + "/s.h", "L", "../canary/secret.h")],
        # the classic: a link, then a file written through it
        "link-then-file": [(S + "/l", "L", "/"), (S + "/l/pwned", "F", b"x")],
        "sysdir-then-file": [(C, "L", sysdir(C)), (C + "/pwned", "F", b"x")],
        "link-up-then-file": [(S + "/l", "L", ".."), (S + "/l/pwned", "F", b"x")],
        # duplicates and file/directory clashes
        "dup-same": [(S + "/h.h", "F", b"x"), (S + "/h.h", "F", b"x")],
        "dup-different": [(S + "/h.h", "F", b"x"), (S + "/h.h", "F", b"y")],
        "dup-link": [(S + "/l", "L", "a.c"), (S + "/l", "L", "a.c")],
        "dup-file-link": [(S + "/h.h", "F", b"x"), (S + "/h.h", "L", "a.c")],
        "file-then-dir": [(S + "/x/b", "F", b"x"), (S + "/x/b/c", "F", b"x")],
        "dir-then-file": [(S + "/x/b/c", "F", b"x"), (S + "/x/b", "F", b"x")],
        "dirm-then-file": [(S + "/x", "D", None), (S + "/x", "F", b"x")],
        "file-then-dirm": [(S + "/x", "F", b"x"), (S + "/x", "D", None)],
        "link-then-dirm": [(S + "/l", "L", ".."), (S + "/l/x", "D", None)],
        # limits
        "too-many": None,
        # the working directory
        "cdir-dotdot": [],
        "cdir-is-file": [],
    }
    res = {}
    for k, ents in out.items():
        c = {"ents": [a] + (ents or []) + [mk], "argv": argv, "cdir": S}
        if k == "link-chain-escape":
            c["argv"] = ["gcc", "-c", "use.c", "-o", "use.o"]
            c["ents"] = [ents[2], ents[0], ents[1], mk]
        elif k == "link-sysdir-file":
            c["argv"] = ["gcc", "-c", "b.c", "-o", "b.o"]
            c["ents"] = [ents[1], ents[0], mk]
        elif k == "too-many":
            c["nfil"] = 20001
        elif k == "cdir-dotdot":
            c["cdir"] = S + "/../canary"
        elif k == "cdir-is-file":
            c["cdir"] = S + "/a.c"
        if k.startswith(("dirm-", "file-then-dirm", "link-then-dirm")):
            c["only"] = "bolt"
        res[k] = c
    return res


def p3_request(c):
    argv = c["argv"]
    out = pkt("DIST", 3) + pstr("CDIR", c["cdir"].encode()) + pkt("ARGC", len(argv))
    for x in argv:
        out += pstr("ARGV", x.encode())
    if "nfil" in c:
        return out + pkt("NFIL", c["nfil"])
    ents = c["ents"]
    out += pkt("NFIL", len(ents))
    for name, kind, data in ents:
        if kind == "D":
            name, kind, data = name + "/" + MARKER, "F", b""
        out += pstr("NAME", name.encode("latin-1"))
        if kind == "F":
            out += pstr("FILE", dcc.lzo_compress(data) if data else b"")
        else:
            out += pstr("LINK", data.encode("latin-1"))
    return out


def bolt_head(c):
    argv = c["argv"]
    out = pkt("BOLT", 1) + pkt("RQST", 5) + pkt("FLAG", 0)
    out += pstr("CDIR", c["cdir"].encode()) + pkt("ARGC", len(argv))
    for x in argv:
        out += pstr("ARGV", x.encode())
    if "nfil" in c:
        return out + pkt("NFIL", c["nfil"])
    ents = c["ents"]
    out += pkt("NFIL", len(ents))
    for name, kind, data in ents:
        out += pstr("NAME", name.encode("latin-1"))
        if kind == "F":
            out += pstr("HASH", hashlib.sha256(data).digest())
        elif kind == "L":
            out += pstr("LINK", data.encode("latin-1"))
        else:
            out += pkt("DIRM", 0)
    return out


class Conn:
    def __init__(self, port, timeout):
        self.s = socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)
        self.buf = b""
        self.end = time.time() + timeout

    def send(self, data):
        try:
            self.s.sendall(data)
            return True
        except OSError:
            return False

    def need(self, n):
        while len(self.buf) < n:
            left = self.end - time.time()
            if left <= 0:
                raise TimeoutError
            self.s.settimeout(left)
            try:
                d = self.s.recv(65536)
            except socket.timeout:
                raise TimeoutError
            except OSError:
                d = b""
            if not d:
                raise EOFError
            self.buf += d

    def hdr(self):
        self.need(12)
        t, v = self.buf[:4].decode("latin-1"), int(self.buf[4:12], 16)
        self.buf = self.buf[12:]
        return t, v

    def body(self, n):
        self.need(n)
        b, self.buf = self.buf[:n], self.buf[n:]
        return b


def read_stat(cn, proto):
    """After the reply's first header: STAT of a reply."""
    t, v = cn.hdr()
    while t == "BEAT":
        t, v = cn.hdr()
    if proto == "bolt" and t == "BOLT":
        t, v = cn.hdr()
        if t == "EROR":
            return "refused (EROR %s)" % cn.body(v).decode("utf-8", "replace")
    if t == "DONE":
        t, v = cn.hdr()
    if t == "STAT":
        return "answered STAT %x" % v
    return "answered unexpected %s" % t


def run_p3(c, port, timeout):
    cn = Conn(port, timeout)
    cn.send(p3_request(c))
    try:
        return read_stat(cn, "p3")
    except EOFError:
        return "refused (closed)"


def run_bolt(c, port, timeout):
    cn = Conn(port, timeout)
    cn.send(bolt_head(c))
    try:
        t, v = cn.hdr()
        while t == "BEAT":
            t, v = cn.hdr()
        if t != "BOLT":
            return "answered unexpected %s" % t
        t, v = cn.hdr()
        if t == "EROR":
            return "refused (EROR %s)" % cn.body(v).decode("utf-8", "replace")
        if t != "NEED":
            return "answered unexpected %s" % t
        idx = [cn.hdr()[1] for _ in range(v)]
        files = b""
        for i in idx:
            data = c["ents"][i][2]
            files += pstr("FILE", dcc.zstd_raw(data) if data else b"")
        cn.send(files)
        return read_stat(cn, "bolt")
    except EOFError:
        return "refused (closed without EROR)"


def main():
    args = sys.argv[1:]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    if args[0] == "list":
        for k, c in cases("/b").items():
            print(k, c.get("only", "p3,bolt"))
        return 0
    if args[0] == "seeds":
        d, base = args[1], args[2]
        for k, c in cases(base).items():
            if k in ("good", "too-many") or k.startswith("cdir-"):
                continue
            h = bolt_head(c)
            # the manifest as the fuzz target reads it: from NFIL on
            open(os.path.join(d, "hostile-" + k), "wb").write(h[h.index(b"NFIL"):])
        return 0
    if args[0] != "run":
        sys.stderr.write(__doc__)
        return 2
    proto, case, port, base = args[1:5]
    timeout = float(dcc.opt(args, "--timeout", "30"))
    c = cases(base)[case]
    try:
        v = (run_bolt if proto == "bolt" else run_p3)(c, port, timeout)
    except TimeoutError:
        print("%s %s: timeout" % (case, proto))
        return 2
    print("%s %s: %s" % (case, proto, v))
    return 0 if v.startswith("refused") else 1


if __name__ == "__main__":
    sys.exit(main())
