#!/usr/bin/env python3
"""dcc.py - small distcc-protocol helper for boltcc's integration tests.

Written for boltcc from the protocol description (doc/ and the distcc
protocol notes); loopback only.  Standard library only: LZO goes through
the system liblzo2 with ctypes, zstd frames for hostile tests are made by
hand.

Subcommands (all addresses are 127.0.0.1):
  freeport [N | --pair]              print N currently free TCP ports, or
                                     two consecutive ones
  http PORT [PATH]                   GET PATH, print the raw response
  wait-http PORT [SECONDS]           wait until PORT answers HTTP
  wait-port PORT [SECONDS]           wait until PORT accepts a connection
  stat PORT FIELD [--above N]        print a counter from the distccd text page
                                     (with --above: wait up to 3 s for > N)
  build --proto N --doti F [--dist V] [--upper] -- ARGV...
                                     write a distcc request to stdout
  build --proto bolt --doti F -- ARGV...
                                     a BOLT compile request (zstd DOTI)
  build --proto 3 --cwd D --files F1,F2... -- ARGV...
                                     a distcc pump request: the files (absolute
                                     paths, sent as they are here), distcc's
                                     marker file in D, and /usr/include as
                                     distcc's system-directory link
  replay PORT FILE [--out F] [--timeout S] [--half-close] [--first N]
                                     send FILE, save everything read until EOF;
                                     --half-close: shutdown(SHUT_WR) after
                                     sending (a complete request, then EOF);
                                     --first N: send only N bytes, then wait
  bolt-reply FILE                    print a BOLT reply's STAT or EROR text
  killrounds ...                     see cmd_killrounds (t_killrounds.sh)
  check-reply FILE --proto N [--expect-stat S] [--doto F] [--quiet]
                                     parse a distcc reply (protocol 3: its
                                     DOTD too); exit 1 if invalid
  lzo c|d < in > out                 LZO1X-1 compress / decompress (liblzo2)
  hostile CASE PORT [--log F]        send one hostile request (`hostile list`)
  bolt-hello PORT                    send the BOLT probe, print the INFO text
  blackhole PORT                     a hung host: accept, read, never answer
  inetd FILE [--out F] -- CMD...     run CMD, request on its stdin (kept open
                                     until the reply is read), reply from stdout
  flood PORT N [--hold S]            open N connections at once, hold, close
  trickle PORT [--max S]             send a request one byte per second and
                                     report when the daemon cuts us off
"""
import ctypes
import ctypes.util
import json
import os
import socket
import struct
import sys
import time

HOST = "127.0.0.1"
BULK = {"DOTI", "FILE", "SERR", "SOUT", "DOTO", "DOTD"}


def die(msg, code=1):
    sys.stderr.write("dcc.py: %s\n" % msg)
    sys.exit(code)


# ------------------------------------------------------------------ LZO
_lzo = None


def lzo_lib():
    global _lzo
    if _lzo is not None:
        return _lzo
    names = []
    found = ctypes.util.find_library("lzo2")
    if found:
        names.append(found)
    names += ["liblzo2.so.2", "liblzo2.so", "liblzo2.2.dylib", "liblzo2.dylib",
              "/opt/homebrew/lib/liblzo2.dylib", "/usr/local/lib/liblzo2.dylib"]
    for n in names:
        try:
            _lzo = ctypes.CDLL(n)
            return _lzo
        except OSError:
            continue
    die("cannot load liblzo2 (install liblzo2-2 / liblzo2-dev)", 77)
    return None


def lzo_compress(data):
    lib = lzo_lib()
    if not data:
        return b""
    src = ctypes.create_string_buffer(bytes(data), len(data))
    cap = len(data) + len(data) // 16 + 64 + 3
    dst = ctypes.create_string_buffer(cap)
    dlen = ctypes.c_ulong(cap)
    wrk = ctypes.create_string_buffer(1 << 18)
    rc = lib.lzo1x_1_compress(src, ctypes.c_ulong(len(data)), dst,
                              ctypes.byref(dlen), wrk)
    if rc != 0:
        die("lzo1x_1_compress failed: %d" % rc)
    return dst.raw[:dlen.value]


def lzo_decompress(data, limit=1 << 30):
    lib = lzo_lib()
    if not data:
        return b""
    src = ctypes.create_string_buffer(bytes(data), len(data))
    cap = max(len(data) * 8, 4096)
    while True:
        dst = ctypes.create_string_buffer(cap)
        dlen = ctypes.c_ulong(cap)
        rc = lib.lzo1x_decompress_safe(src, ctypes.c_ulong(len(data)), dst,
                                       ctypes.byref(dlen), None)
        if rc == 0:
            return dst.raw[:dlen.value]
        if rc == -5 and cap < limit:        # LZO_E_OUTPUT_OVERRUN
            cap *= 2
            continue
        raise ValueError("LZO decompression failed (%d)" % rc)


# ------------------------------------------------------------ framing
def pkt(tok, val):
    return tok.encode("ascii") + (b"%08x" % (val & 0xffffffff))


def pstr(tok, body):
    return pkt(tok, len(body)) + body


def build_request(proto, argv, doti, dist=None, upper=False):
    out = pkt("DIST", proto if dist is None else dist)
    out += pkt("ARGC", len(argv))
    for a in argv:
        out += pstr("ARGV", a.encode("utf-8", "surrogateescape"))
    body = lzo_compress(doti) if proto >= 2 else doti
    hdr = "DOTI%08x" % len(body)
    if upper:
        hdr = hdr.upper()
    return out + hdr.encode("ascii") + body


P3_MARKER = "forcing_technique_271828"


def p3_sysdir_link(d):
    """distcc pump's link target for system directory d."""
    return "../" * (20 + d.count("/")) + d[1:]


def p3_request(cwd, argv, entries):
    """A distcc protocol-3 (pump) request; entries: (name, kind, data),
    kind "F" a file (bytes), "L" a link (its target)."""
    out = pkt("DIST", 3) + pstr("CDIR", cwd.encode()) + pkt("ARGC", len(argv))
    for a in argv:
        out += pstr("ARGV", a.encode("utf-8", "surrogateescape"))
    out += pkt("NFIL", len(entries))
    for name, kind, data in entries:
        out += pstr("NAME", name.encode("utf-8", "surrogateescape"))
        if kind == "F":
            out += pstr("FILE", lzo_compress(data) if data else b"")
        else:
            out += pstr("LINK", data.encode("utf-8", "surrogateescape"))
    return out


class Parser:
    def __init__(self, data):
        self.d = data
        self.i = 0

    def hdr(self, expect=None):
        if self.i + 12 > len(self.d):
            raise ValueError("truncated header at offset %d (have %d bytes)"
                             % (self.i, len(self.d)))
        tok = self.d[self.i:self.i + 4].decode("ascii", "replace")
        hexs = self.d[self.i + 4:self.i + 12]
        try:
            val = int(hexs.decode("ascii"), 16)
        except ValueError:
            raise ValueError("bad hex %r after %s" % (hexs, tok))
        if expect and tok != expect:
            raise ValueError("expected %s at offset %d, got %r"
                             % (expect, self.i, tok))
        self.i += 12
        return tok, val

    def body(self, n):
        if self.i + n > len(self.d):
            raise ValueError("truncated body: want %d bytes at %d, have %d"
                             % (n, self.i, len(self.d) - self.i))
        b = self.d[self.i:self.i + n]
        self.i += n
        return b


def parse_reply(data, proto):
    p = Parser(data)
    rep = {}
    _, rep["done"] = p.hdr("DONE")
    _, rep["stat"] = p.hdr("STAT")
    for tok in ("SERR", "SOUT", "DOTO"):
        _, n = p.hdr(tok)
        raw = p.body(n)
        rep[tok.lower() + "_wire"] = n
        rep[tok.lower()] = lzo_decompress(raw) if (proto >= 2 and n) else raw
    if proto == 3 and rep["stat"] == 0:
        _, n = p.hdr("DOTD")
        raw = p.body(n)
        rep["dotd"] = lzo_decompress(raw) if n else raw
    rep["trailing"] = len(data) - p.i
    return rep


# ------------------------------------------------------------ sockets
def connect(port, timeout=10.0):
    s = socket.create_connection((HOST, int(port)), timeout=timeout)
    return s


def read_all(s, timeout):
    """Read until EOF/RST/timeout. Returns (bytes, how)."""
    s.settimeout(timeout)
    out = bytearray()
    how = "eof"
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            out += c
    except socket.timeout:
        how = "timeout"
    except ConnectionResetError:
        how = "reset"
    return bytes(out), how


def send_all(s, data):
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def exchange(port, data, timeout=30.0):
    s = connect(port)
    ok = send_all(s, data)
    rep, how = read_all(s, timeout)
    s.close()
    return rep, how, ok


def http_get(port, path="/", timeout=5.0):
    s = connect(port, timeout)
    s.sendall(("GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
    data, _ = read_all(s, timeout)
    s.close()
    return data


def split_http(raw):
    for sep in (b"\r\n\r\n", b"\n\n"):
        k = raw.find(sep)
        if k >= 0:
            return raw[:k], raw[k + len(sep):]
    return raw, b""


# -------------------------------------------------------- subcommands
def cmd_freeport(args):
    if args and args[0] == "--pair":
        # two consecutive free ports (job port, stats port = job port + 1,
        # the default boltcc assumes for a host's stats)
        for _ in range(200):
            a = socket.socket()
            a.bind((HOST, 0))
            p = a.getsockname()[1]
            b = socket.socket()
            try:
                b.bind((HOST, p + 1))
            except OSError:
                continue
            finally:
                a.close()
                b.close()
            print("%d %d" % (p, p + 1))
            return 0
        die("no free port pair")
    n = int(args[0]) if args else 1
    socks = []
    ports = []
    for _ in range(n):
        s = socket.socket()
        s.bind((HOST, 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    print(" ".join(str(p) for p in ports))


def cmd_http(args):
    port = args[0]
    path = args[1] if len(args) > 1 else "/"
    sys.stdout.buffer.write(http_get(port, path))


def cmd_wait_http(args):
    port = args[0]
    limit = float(args[1]) if len(args) > 1 else 10.0
    end = time.time() + limit
    while time.time() < end:
        try:
            raw = http_get(port, "/", 2.0)
            if raw.startswith(b"HTTP/"):
                return 0
        except OSError:
            pass
        time.sleep(0.05)
    return 1


def cmd_wait_port(args):
    port = args[0]
    limit = float(args[1]) if len(args) > 1 else 10.0
    end = time.time() + limit
    while time.time() < end:
        try:
            s = connect(port, 1.0)
            s.close()
            return 0
        except OSError:
            time.sleep(0.05)
    return 1


def stats_text(port):
    _, body = split_http(http_get(port, "/"))
    fields = {}
    for line in body.decode("utf-8", "replace").splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[0].startswith("dcc_"):
            fields[parts[0]] = parts[1].strip()
    return fields


def cmd_stat(args):
    """stat PORT FIELD [--above N] [--wait S]: with --above, poll until the
    counter exceeds N (a daemon may count a job a moment after the client
    has its reply) or S seconds (default 3) pass; print the last value."""
    above = opt(args, "--above")
    wait = float(opt(args, "--wait", "3"))
    end = time.time() + wait
    while True:
        f = stats_text(args[0])
        if args[1] not in f:
            die("field %s not on the stats page of port %s" % (args[1], args[0]))
        v = f[args[1]]
        if above is None or time.time() >= end:
            break
        try:
            if int(v) > int(above):
                break
        except ValueError:
            break
        time.sleep(0.05)
    print(v)


def opt(args, name, default=None, flag=False):
    if name in args:
        k = args.index(name)
        if flag:
            del args[k]
            return True
        v = args[k + 1]
        del args[k:k + 2]
        return v
    return False if flag else default


def cmd_build(args):
    if "--" not in args:
        die("build: need -- ARGV")
    k = args.index("--")
    argv = args[k + 1:]
    o = args[:k]
    proto = opt(o, "--proto", "1")
    if proto == "3":
        cwd = opt(o, "--cwd")
        ents = [(f, "F", open(f, "rb").read())
                for f in opt(o, "--files").split(",") if f]
        ents.append(("/usr/include", "L", p3_sysdir_link("/usr/include")))
        ents.append((cwd + "/" + P3_MARKER, "F", b""))
        sys.stdout.buffer.write(p3_request(cwd, argv, ents))
        return 0
    doti = open(opt(o, "--doti"), "rb").read()
    if proto == "bolt":
        sys.stdout.buffer.write(bolt_raw(argv=[a.encode() for a in argv],
                                         doti_wire=zstd_raw(doti)))
        return 0
    proto = int(proto)
    dist = opt(o, "--dist")
    upper = opt(o, "--upper", flag=True)
    sys.stdout.buffer.write(build_request(proto, argv, doti,
                                          None if dist is None else int(dist),
                                          upper))


def cmd_replay(args):
    out = opt(args, "--out")
    timeout = float(opt(args, "--timeout", "60"))
    first = opt(args, "--first")
    half = opt(args, "--half-close", flag=True)
    port, fn = args[0], args[1]
    data = open(fn, "rb").read()
    if first is not None:
        data = data[:int(first)]
    s = connect(port)
    send_all(s, data)
    if half:
        s.shutdown(socket.SHUT_WR)
    rep, how = read_all(s, timeout)
    s.close()
    if out:
        open(out, "wb").write(rep)
    sys.stderr.write("replay: sent %d bytes, got %d bytes (%s)\n"
                     % (len(data), len(rep), how))
    return 0


def is_elf_object(b):
    return len(b) > 20 and b[:4] == b"\x7fELF" and \
        struct.unpack("<H", b[16:18])[0] == 1      # ET_REL


def cmd_check_reply(args):
    proto = int(opt(args, "--proto", "1"))
    expect = opt(args, "--expect-stat", "0")
    doto_out = opt(args, "--doto")
    quiet = opt(args, "--quiet", flag=True)
    data = open(args[0], "rb").read()
    try:
        rep = parse_reply(data, proto)
    except ValueError as e:
        print("invalid reply (%d bytes): %s" % (len(data), e))
        return 1
    summary = "DONE %08x STAT %08x SERR %d SOUT %d DOTO %d(wire %d) trailing %d" % (
        rep["done"], rep["stat"], len(rep["serr"]), len(rep["sout"]),
        len(rep["doto"]), rep["doto_wire"], rep["trailing"])
    if not quiet:
        print(summary)
    bad = []
    if rep["done"] != proto:
        bad.append("DONE %d != protocol %d" % (rep["done"], proto))
    if rep["trailing"]:
        bad.append("%d bytes after DOTO" % rep["trailing"])
    if expect != "any" and rep["stat"] != int(expect, 0):
        bad.append("STAT %#x != %s" % (rep["stat"], expect))
    if rep["stat"] == 0 and not is_elf_object(rep["doto"]):
        bad.append("DOTO is not an ELF relocatable object")
    if rep["stat"] != 0 and rep["doto"]:
        bad.append("non-empty DOTO with STAT != 0")
    if rep["serr"] and not quiet:
        print("SERR: " + rep["serr"].decode("utf-8", "replace").strip())
    if doto_out:
        open(doto_out, "wb").write(rep["doto"])
    for b in bad:
        print("BAD: " + b)
    return 1 if bad else 0


def cmd_lzo(args):
    data = sys.stdin.buffer.read()
    if args[0] == "c":
        sys.stdout.buffer.write(lzo_compress(data))
    else:
        sys.stdout.buffer.write(lzo_decompress(data))


# ------------------------------------------------------------ hostile
def small_doti():
    return b'# 1 "h.c"\nint h(void) { return 42; }\n'


def good_argv():
    return ["gcc", "-c", "h.c", "-o", "h.o"]


def req_with(argv=None, doti=None, proto=1):
    return build_request(proto, argv or good_argv(),
                         small_doti() if doti is None else doti)


def zstd_frame_huge():
    """A zstd frame whose header claims 2^40 bytes of content, followed by
    RLE blocks (each 128 KiB of one byte).  Hand-made: magic, FHD with an
    8-byte content size and single-segment, then blocks."""
    out = struct.pack("<I", 0xFD2FB528)
    out += bytes([0xE0]) + struct.pack("<Q", 1 << 40)
    blk = 128 * 1024
    for i in range(64):
        last = 1 if i == 63 else 0
        h = last | (1 << 1) | (blk << 3)       # RLE block
        out += struct.pack("<I", h)[:3] + b"A"
    return out


def lzo_bomb(total=600 << 20):
    """A valid LZO1X-1 block that expands to `total` bytes (past the 512 MiB
    DOTI limit) from about 2.4 MB: one literal, then M3 matches at distance
    1 whose lengths use the zero-byte extension (255 per byte, ~1 MiB per
    match), then the end-of-stream marker."""
    k = 4096
    per = 255 * k + 31 + 1 + 2
    out = bytearray(b"\x12A")
    for _ in range(total // per + 1):
        out += b"\x20" + b"\0" * k + b"\x01" + b"\0\0"
    return bytes(out + b"\x11\0\0")


def bolt_compile(doti_wire, argv=None):
    argv = argv or good_argv()
    out = pkt("BOLT", 1) + pkt("RQST", 1) + pkt("FLAG", 0)
    out += pstr("CDIR", b"/tmp")
    out += pkt("ARGC", len(argv))
    for a in argv:
        out += pstr("ARGV", a.encode())
    return out + pstr("DOTI", doti_wire)


def zstd_raw(data):
    """A valid zstd frame holding data in raw blocks, content size declared."""
    out = struct.pack("<I", 0xFD2FB528) + bytes([0xA0]) + struct.pack("<I", len(data))
    blk = 128 * 1024
    chunks = [data[i:i + blk] for i in range(0, len(data), blk)] or [b""]
    for k, c in enumerate(chunks):
        last = 1 if k == len(chunks) - 1 else 0
        out += struct.pack("<I", last | (0 << 1) | (len(c) << 3))[:3] + c
    return out


def bolt_raw(version=1, kind=1, cdir=b"/tmp", argv=None, doti_wire=None):
    argv = argv if argv is not None else [a.encode() for a in good_argv()]
    out = pkt("BOLT", version) + pkt("RQST", kind)
    if kind != 1:
        return out
    out += pkt("FLAG", 0) + pstr("CDIR", cdir) + pkt("ARGC", len(argv))
    for a in argv:
        out += pstr("ARGV", a)
    return out + pstr("DOTI", zstd_raw(small_doti()) if doti_wire is None else doti_wire)


def hostile_cases():
    p1 = req_with()
    return {
        "bolt-v2": bolt_raw(version=2),
        "bolt-kind99": bolt_raw(kind=99),
        "bolt-cdir-relative": bolt_raw(cdir=b"tmp/x"),
        "bolt-argv-nul": bolt_raw(argv=[b"gcc", b"-c", b"h.c\x00x", b"-o", b"h.o"]),
        "bolt-zstd-garbage": bolt_raw(doti_wire=b"\x28\xb5\x2f\xfd" + b"\x00" * 12),
        "bolt-zstd-lies": bolt_raw(doti_wire=zstd_raw(small_doti())[:-8]),
        "bolt-cc-refused": bolt_raw(argv=[b"gcc;id", b"-c", b"h.c", b"-o", b"h.o"]),
        "bolt-argc-huge": pkt("BOLT", 1) + pkt("RQST", 1) + pkt("FLAG", 0) +
        pstr("CDIR", b"/tmp") + pkt("ARGC", 0xffffffff),
        "trunc-token": b"DIS",
        "trunc-hex": b"DIST0000",
        "trunc-argv": p1[:40],
        "trunc-doti": p1[:-10],
        "bad-hex": b"DIST0000000gARGC00000005",
        "argc-huge": pkt("DIST", 1) + pkt("ARGC", 0xffffffff),
        "argv-huge": pkt("DIST", 1) + pkt("ARGC", 1) + pkt("ARGV", 0xfffffff0) + b"gcc",
        "doti-huge": pkt("DIST", 1) + pkt("ARGC", 5) +
        b"".join(pstr("ARGV", a.encode()) for a in good_argv()) +
        pkt("DOTI", 0xffffffff) + b"#",
        "doti-near4g": pkt("DIST", 2) + pkt("ARGC", 5) +
        b"".join(pstr("ARGV", a.encode()) for a in good_argv()) +
        pkt("DOTI", 0xfffffff0) + b"#",
        "lzo-bomb": None,                    # built lazily (slow-ish)
        "lzo-garbage": pkt("DIST", 2) + pkt("ARGC", 5) +
        b"".join(pstr("ARGV", a.encode()) for a in good_argv()) +
        pstr("DOTI", b"\xff" * 64),
        "zstd-huge": None,
        "dist4": pkt("DIST", 4) + p1[12:],
        "dist0": pkt("DIST", 0) + p1[12:],
        "dist3": pkt("DIST", 3) + p1[12:],
        "garbage-http": b"GET / HTTP/1.0\r\n\r\n",
        "garbage-bin": bytes(range(256)) * 4,
        "cc-semicolon": req_with(["gcc;id", "-c", "h.c", "-o", "h.o"]),
        "cc-binsh": req_with(["/bin/sh", "-c", "h.c", "-o", "h.o"]),
        "cc-dotdot": req_with(["../x", "-c", "h.c", "-o", "h.o"]),
        "cc-usrlocal": req_with(["/usr/local/bin/gcc", "-c", "h.c", "-o", "h.o"]),
        "cc-sh": req_with(["sh", "-c", "h.c", "-o", "h.o"]),
        "cc-empty": req_with(["", "-c", "h.c", "-o", "h.o"]),
        "fplugin": req_with(["gcc", "-fplugin=/x.so", "-c", "h.c", "-o", "h.o"]),
        "specs": req_with(["gcc", "-specs=x", "-c", "h.c", "-o", "h.o"]),
        "no-source": req_with(["gcc", "-c", "-o", "h.o"]),
        "argc-zero": pkt("DIST", 1) + pkt("ARGC", 0) + pstr("DOTI", small_doti()),
    }


def cmd_hostile(args):
    logf = opt(args, "--log")
    timeout = float(opt(args, "--timeout", "15"))
    case, port = args[0], args[1]
    cases = hostile_cases()
    if case == "list":
        print(" ".join(sorted(cases)))
        return 0
    if case not in cases:
        die("unknown case %s" % case)
    data = cases[case]
    if case == "lzo-bomb":
        bomb = lzo_bomb()
        data = pkt("DIST", 2) + pkt("ARGC", 5) + \
            b"".join(pstr("ARGV", a.encode()) for a in good_argv()) + \
            pstr("DOTI", bomb)
    elif case == "zstd-huge":
        data = bolt_compile(zstd_frame_huge())
    t0 = time.time()
    s = connect(port)
    sent = send_all(s, data)
    rep, how = read_all(s, timeout)
    s.close()
    dt = time.time() - t0
    verdict = "refused"
    if rep.startswith(b"DONE"):
        try:
            r = parse_reply(rep, 2 if data[:12] == pkt("DIST", 2) else 1)
            verdict = "answered STAT %#x" % r["stat"]
        except ValueError as e:
            verdict = "answered (unparsable: %s)" % e
    elif rep.startswith(b"BOLT"):
        verdict = "refused with BOLT reply"
        if b"EROR" not in rep[:32]:
            verdict = "answered BOLT (no EROR)"
    elif rep:
        verdict = "answered %d unexpected bytes %r" % (len(rep), rep[:40])
    print("%s: sent %d bytes%s, got %d bytes back (%s) in %.1fs -> %s"
          % (case, len(data), "" if sent else " (peer closed early)",
             len(rep), how, dt, verdict))
    if how == "timeout":
        return 2
    return 0 if verdict.startswith("refused") or case in ("dist0-ok",) else 1


def cmd_inetd(args):
    """Run CMD with the request on a pipe kept open until the reply has
    been read, like ssh does (EOF on stdin means the client went away)."""
    import subprocess
    out = opt(args, "--out")
    timeout = float(opt(args, "--timeout", "60"))
    k = args.index("--")
    req = open(args[0], "rb").read()
    p = subprocess.Popen(args[k + 1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdin.write(req)
    p.stdin.flush()
    data = bytearray()
    end = time.time() + timeout
    import select
    while time.time() < end:
        r, _, _ = select.select([p.stdout], [], [], 0.5)
        if r:
            c = os.read(p.stdout.fileno(), 65536)
            if not c:
                break
            data += c
    p.stdin.close()
    try:
        rc = p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = -9
    if out:
        open(out, "wb").write(data)
    sys.stderr.write("inetd: sent %d bytes, got %d bytes, exit %d\n" % (len(req), len(data), rc))
    return 0 if rc == 0 else 1


def cmd_bolt_reply(args):
    """bolt-reply FILE: "STAT <hex> SERR <text>" or "EROR <text>"."""
    data = open(args[0], "rb").read()
    p = Parser(data)
    try:
        p.hdr("BOLT")
        tok, n = p.hdr()
        while tok == "BEAT":
            tok, n = p.hdr()
        if tok == "EROR":
            print("EROR " + p.body(n).decode("utf-8", "replace"))
            return 0
        if tok != "STAT":
            print("unexpected %s" % tok)
            return 1
        print("STAT %x" % n)
        return 0
    except ValueError as e:
        print("no BOLT reply (%d bytes): %s" % (len(data), e))
        return 1


def cmd_bolt_hello(args):
    """bolt-hello PORT: the BOLT probe; prints the INFO text."""
    rep, how, _ = exchange(args[0], pkt("BOLT", 1) + pkt("RQST", 2), 10)
    p = Parser(rep)
    try:
        p.hdr("BOLT")
        _, n = p.hdr("INFO")
        print(p.body(n).decode("utf-8", "replace"))
        return 0
    except ValueError as e:
        print("no INFO reply (%d bytes, %s): %s" % (len(rep), how, e))
        return 1


def cmd_blackhole(args):
    """blackhole PORT: accept connections, read what comes, never answer
    (a hung host).  Runs until killed."""
    import select
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((HOST, int(args[0])))
    ls.listen(64)
    conns = []
    while True:
        r, _, _ = select.select([ls] + conns, [], [], 1.0)
        for s in r:
            if s is ls:
                c, _ = ls.accept()
                conns.append(c)
            else:
                try:
                    if not s.recv(65536):
                        conns.remove(s)
                        s.close()
                except OSError:
                    conns.remove(s)


def cmd_flood(args):
    hold = float(opt(args, "--hold", "1"))
    port, n = args[0], int(args[1])
    socks = []
    fails = 0
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect((HOST, int(port)))
        except BlockingIOError:
            pass
        except OSError:
            fails += 1
            s.close()
            continue
        socks.append(s)
    time.sleep(hold)
    # half of them send a partial request, the rest nothing
    for k, s in enumerate(socks):
        if k % 2:
            try:
                s.send(b"DIST00000001ARGC0000")
            except OSError:
                pass
    time.sleep(0.2)
    for s in socks:
        s.close()
    print("flood: opened %d connections (%d failed to start), held %.1fs"
          % (len(socks), fails, hold))
    return 0


def cmd_trickle(args):
    limit = float(opt(args, "--max", "30"))
    port = args[0]
    data = req_with()
    s = connect(port)
    s.settimeout(1.0)
    t0 = time.time()
    sent = 0
    cut = None
    while time.time() - t0 < limit:
        try:
            s.send(data[sent % len(data):sent % len(data) + 1])
            sent += 1
        except OSError:
            cut = "send failed"
            break
        try:
            c = s.recv(1)
            if not c:
                cut = "eof"
                break
        except socket.timeout:
            pass
        except OSError:
            cut = "reset"
            break
    dt = time.time() - t0
    s.close()
    print("trickle: sent %d bytes one per second; %s after %.1fs"
          % (sent, cut or "NOT cut off", dt))
    return 0 if cut else 1


KR_BODY = "".join(
    "unsigned f%d(unsigned x) { unsigned i, a = x;\n"
    "  for (i = 0; i < x; i++) { a = a * %du + (a >> %d) + i;\n"
    "    if (a %% %d == 1) a ^= x << 3; }\n  return a; }\n"
    % (i, 2 * i + 3, i % 13 + 1, i + 7) for i in range(40))


def cmd_killrounds(args):
    """killrounds BOLTCCD BOLTCC WORKDIR SECONDS

    Real compiles of good files (each new, so compiled, not served from
    a cache) by 4 concurrent clients (boltcc in BOLT pump and BOLT plain
    mode, Debian's distcc with protocol 2 when installed), no fallback,
    no local retry, while the daemon is SIGKILLed every 0.3-1.2 s (even
    rounds only the parent, odd rounds its process group) and restarted
    on the same port, scratch dir and cache dir.  A job may fail as a
    farm failure (connection closed, refused: exit >= 100); a compile
    error (exit 1-99) on these files is a bug.  Prints
    "rounds R ok O farm F bad B", then each bad job's stderr."""
    import random
    import subprocess
    import threading
    boltccd, boltcc, work, secs = args[:4]
    secs = float(secs)
    scratch = os.path.join(work, "scratch")
    cache = os.path.join(work, "cache")
    src = os.path.join(work, "src")
    for d in (scratch, src, os.path.join(work, "client")):
        os.makedirs(d, exist_ok=True)
    ls = socket.socket()
    ls.bind((HOST, 0))
    port = ls.getsockname()[1]
    ls.close()
    log = os.path.join(work, "d.log")
    env = dict(os.environ)
    env.update(BOLTCC_DIR=os.path.join(work, "client"), DISTCC_FALLBACK="0",
               DISTCC_SKIP_LOCAL_RETRY="1", DISTCC_BACKOFF_PERIOD="0",
               DISTCC_DIR=os.path.join(work, "client"),
               DISTCC_HOSTS="127.0.0.1:%d/4,lzo" % port)
    env.pop("BOLTCC_HOSTS", None)
    kinds = [("pump", [boltcc], "127.0.0.1:%d,bolt" % port),
             ("plain", [boltcc], "127.0.0.1:%d,bolt,plain" % port)]
    have_distcc = any(os.access(os.path.join(d, "distcc"), os.X_OK)
                      for d in os.environ.get("PATH", "").split(":"))
    if have_distcc:
        kinds.append(("distcc", ["distcc"], None))

    def start():
        d = subprocess.Popen(
            [boltccd, "--no-detach", "--listen", HOST, "--port", str(port),
             "--stats-port", "0", "--jobs", "2", "--queue", "16",
             "--tmp-dir", scratch, "--cache-dir", cache, "--log-file", log,
             "--log-level", "debug"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        end = time.time() + 15
        while time.time() < end:
            try:
                socket.create_connection((HOST, port), timeout=0.2).close()
                return d
            except OSError:
                time.sleep(0.01)
        die("daemon did not come up")

    res = {"ok": 0, "farm": 0, "bad": []}
    lock = threading.Lock()
    state = {"n": 0, "stop": False}

    def client(k):
        while not state["stop"]:
            with lock:
                state["n"] += 1
                n = state["n"]
            kind, cmd, hosts = kinds[n % len(kinds)]
            fn = os.path.join(src, "k%d.c" % n)
            with open(fn, "w") as f:
                f.write("const char *tag%d = \"%s %d\";\n%s"
                        % (n, kind, n, KR_BODY))
            e = dict(env)
            if hosts:
                e["BOLTCC_HOSTS"] = hosts
            p = subprocess.run(cmd + ["gcc", "-O2", "-c", fn, "-o",
                                      fn[:-2] + ".o"], cwd=src, env=e,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=120)
            with lock:
                if p.returncode == 0:
                    res["ok"] += 1
                elif p.returncode >= 100:
                    res["farm"] += 1
                else:
                    res["bad"].append((kind, n, p.returncode,
                                       p.stderr.decode("utf-8", "replace")))

    rng = random.Random(21)
    d = start()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    t_end = time.time() + secs
    rounds = 0
    while time.time() < t_end:
        time.sleep(rng.uniform(0.3, 1.2))
        if rounds % 2 == 0:
            os.kill(d.pid, 9)
        else:
            os.killpg(d.pid, 9)
        d.wait()
        rounds += 1
        d = start()
    time.sleep(1.0)         # a last stretch without kills
    state["stop"] = True
    for t in threads:
        t.join()
    d.terminate()
    d.wait()
    print("rounds %d ok %d farm %d bad %d" % (rounds, res["ok"], res["farm"],
                                              len(res["bad"])))
    for kind, n, rc, err in res["bad"]:
        print("BAD %s job %d exit %d: %s" % (kind, n, rc, err.strip()[:400]))
    return 0


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    fn = {
        "freeport": cmd_freeport, "http": cmd_http, "wait-http": cmd_wait_http,
        "wait-port": cmd_wait_port,
        "stat": cmd_stat, "build": cmd_build, "replay": cmd_replay,
        "check-reply": cmd_check_reply, "lzo": cmd_lzo, "hostile": cmd_hostile,
        "flood": cmd_flood, "inetd": cmd_inetd,
        "bolt-hello": cmd_bolt_hello, "bolt-reply": cmd_bolt_reply,
        "killrounds": cmd_killrounds, "blackhole": cmd_blackhole, "trickle": cmd_trickle,
    }.get(cmd)
    if fn is None:
        die("unknown command %s" % cmd, 2)
    rc = fn(args)
    return rc or 0


if __name__ == "__main__":
    sys.exit(main())
