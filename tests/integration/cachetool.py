#!/usr/bin/env python3
"""cachetool.py - helpers for the artifact-cache integration tests
(t_cache*.sh).  Standard library only; loopback only.

  cstat PORT FIELD            a cache counter from boltccd's /stats.json
  dstat PORT FIELD            a daemon counter (top level of /stats.json)
  identity CACHEDIR           the daemon's memoized compiler identity
  key IDENTITY CDIR FLAGS DOTI -- ARGV...
                              the cache key as doc/cache.md defines it
  pumpkey IDENTITY CDIR FILE -- ARGV...
                              the pump key of the request "bolt pump"
                              sends (doc/cache.md, "Pump keys")
  bolt PORT MODE [ARGS]       send a hand-made BOLT request, print the
                              reply's first token (and EROR text):
      compile IDENT|- DOTI -- ARGV...   compile (IDENT '-' = no CMPI)
      forged DOTI OBJ -- ARGV...        compile + a forged DOTO/DIAG after it
      lookup KEY                        lookup
      lookup-split KEY                  lookup sent in two writes, 0.3 s apart
      lookup-twice KEY                  two lookups in one write
      lookup-trail KEY                  lookup and 3 more bytes in one write
      locate KEY FLAGS HOST             LOCATE at the owner; prints MISS,
                                        "LOCN <host>" or the hit's STAT
      locate-split KEY FLAGS HOST       the same sent in two writes
      store KEY OBJ                     an invented "store" request kind
      pump CDIR FILE CLAIM -- ARGV...   a BOLT pump request shipping
                                        CDIR/FILE (manifest hash CLAIM:
                                        64 hex, or '-' = its real SHA-256),
                                        the file sent if NEEDed; prints
                                        "NEED<k> <token>[ <token>]"
  crashloop ...               see crash_loop() (t_cache_crash.sh)
"""
import hashlib
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time

HOST = "127.0.0.1"


def die(msg):
    sys.stderr.write("cachetool: %s\n" % msg)
    sys.exit(2)


def http_get(port, path, timeout=5.0):
    s = socket.create_connection((HOST, port), timeout=timeout)
    s.sendall(("GET %s HTTP/1.0\r\n\r\n" % path).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    i = data.find(b"\n\n")
    j = data.find(b"\r\n\r\n")
    if j >= 0 and (i < 0 or j < i):
        return data[j + 4:]
    return data[i + 2:] if i >= 0 else data


def cache_stats(port):
    return json.loads(http_get(port, "/stats.json").decode())["cache"]


def hdr(tok, val):
    return tok.encode() + b"%08x" % val


def pstr(tok, body):
    if isinstance(body, str):
        body = body.encode()
    return hdr(tok, len(body)) + body


def zstd_raw(data):
    """One zstd frame of raw blocks, declaring its content size."""
    if not data:
        return b""
    out = struct.pack("<I", 0xFD2FB528) + bytes([0xA0]) + struct.pack("<I", len(data))
    off = 0
    while True:
        chunk = data[off:off + 65536]
        off += len(chunk)
        last = 1 if off >= len(data) else 0
        h = last | (0 << 1) | (len(chunk) << 3)
        out += struct.pack("<I", h)[:3] + chunk
        if last:
            return out


def bulk(tok, data):
    return pstr(tok, zstd_raw(data)) if data else hdr(tok, 0)


def compile_req(ident, cdir, argv, doti, flags=0):
    if ident:
        flags |= 0x2
    m = hdr("BOLT", 1) + hdr("RQST", 1) + hdr("FLAG", flags) + pstr("CDIR", cdir)
    if ident:
        m += pstr("CMPI", ident)
    m += hdr("ARGC", len(argv))
    for a in argv:
        m += pstr("ARGV", a)
    return m + bulk("DOTI", doti)


def exchange(port, data, timeout=30.0, then=None):
    s = socket.create_connection((HOST, port), timeout=timeout)
    try:
        s.sendall(data)
        if then is not None:
            time.sleep(0.3)
            s.sendall(then)
    except OSError:
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    s.close()
    return out


def describe(reply):
    if len(reply) < 24:
        return "CLOSED" if not reply else "SHORT %r" % reply[:40]
    tok = reply[12:16].decode("latin-1")
    if tok == "EROR":
        n = int(reply[16:24], 16)
        return "EROR " + reply[24:24 + n].decode("latin-1")
    return tok


def wants_debug(argv):
    """Whether argv asks for debug info (doc/cache.md: then cwd is keyed)."""
    debug = False
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in KEEP_VAL or a in DROP_VAL:
            skip = True
            continue
        if not a.startswith("-g"):
            continue
        if a in ("-g0", "-ggdb0", "-gstabs0"):
            debug = False
        elif (a.startswith("-gno-") or a.startswith("-gz") or
              a in ("-gcolumn-info", "-gsplit-dwarf", "-grecord-gcc-switches",
                    "-gcc-toolchain")):
            pass
        else:
            debug = True
    return debug


def key_head(tag, ident, flags, argv):
    """Both keys start alike (cache/key.c hash_head): the hash so far and
    the function that adds a NUL-terminated field."""
    h = hashlib.sha256()

    def f(s):
        h.update(s.encode() + b"\0")
    words = key_words(argv)
    f(tag)
    f(ident)
    f("flags %d" % (flags & 1))
    f("argc %d" % len(words))
    for w in words:
        f(w)
    return h, f


def key_of(ident, cdir, flags, doti, argv):
    h, f = key_head("boltcc-cache-key-v1", ident, flags, argv)
    if wants_debug(argv):
        if cdir is not None:
            f("cdir")
            f(cdir)
        else:
            f("cdir-daemon-temp")
    else:
        f("nodebug")
    f("doti %d" % len(doti))
    h.update(doti)
    return h.hexdigest()


def key_words(argv):
    """The normalized argv (doc/cache.md)."""
    drop = {"-MD", "-MMD", "-MP", "-MG"}
    words = [os.path.basename(argv[0])]
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in DROP_VAL:
            i += 2
            continue
        if a in drop or any(a.startswith(p) and len(a) > len(p)
                            for p in ("-o", "-MF", "-MT", "-MQ", "-MJ")):
            i += 1
            continue
        words.append(a)
        if a in KEEP_VAL and i + 1 < len(argv):
            words.append(argv[i + 1])
            i += 1
        i += 1
    return words


DROP_VAL = {"-o", "-MF", "-MT", "-MQ", "-MJ", "--serialize-diagnostics"}
KEEP_VAL = {"-x", "-include", "-imacros", "-idirafter", "-iprefix",
            "-iwithprefix", "-iwithprefixbefore", "-isystem", "-isystem-after",
            "-isysroot", "-iquote", "-iframework", "-ivfsoverlay", "-include-pch",
            "-I", "-D", "-U", "-L", "-A", "-F", "-Xclang", "-Xlinker",
            "-Xassembler", "-Xpreprocessor", "-Xanalyzer", "-target", "-arch",
            "--param", "-mllvm", "-T", "-u", "-z", "--sysroot", "-gcc-toolchain"}


def pump_key_of(ident, cdir, flags, argv, entries):
    """The pump key as doc/cache.md ("Pump keys") defines it.  entries:
    (kind 'F'|'L'|'D', absolute path, hex hash | link target | '')."""
    h, f = key_head("boltcc-pump-key-v1", ident, flags, argv)
    # the .d shape (no -MD/-MMD here: the tests' pump jobs want none)
    if any(a in ("-MD", "-MMD") for a in argv):
        die("pump_key_of: .d shape not modelled here")
    f("nodeps")
    if wants_debug(argv):
        die("pump_key_of: debug info not modelled here")
    f("nodebug")
    recs = []
    c = cdir.rstrip("/") or "/"
    for kind, path, payload in entries:
        if c != "/" and path == c:
            kp = "rel:."
        elif c != "/" and path.startswith(c + "/"):
            kp = "rel:" + path[len(c) + 1:]
        else:
            kp = "abs:" + path
        recs.append((kind + kp).encode() + b"\0" + payload.encode())
    recs.sort()
    f("entries %d" % len(recs))
    for r in recs:
        f("entry %d" % len(r))
        h.update(r)
    return h.hexdigest()


def daemon_identity(cachedir):
    d = os.path.join(cachedir, "identity")
    for n in sorted(os.listdir(d)):
        lines = open(os.path.join(d, n)).read().splitlines()
        if lines and len(lines[-1]) == 64:
            return lines[-1]
    die("no identity memo in " + d)


def split_dashdash(args):
    if "--" not in args:
        die("need -- ARGV")
    i = args.index("--")
    return args[:i], args[i + 1:]


def cmd_bolt(args):
    port = int(args[0])
    mode = args[1]
    rest = args[2:]
    if mode == "compile":
        pre, argv = split_dashdash(rest)
        ident = None if pre[0] == "-" else pre[0]
        doti = open(pre[1], "rb").read()
        print(describe(exchange(port, compile_req(ident, "/tmp", argv, doti))))
    elif mode == "forged":
        pre, argv = split_dashdash(rest)
        doti = open(pre[0], "rb").read()
        obj = open(pre[1], "rb").read()
        forged = (hdr("STAT", 0) + hdr("SERR", 0) + hdr("SOUT", 0) +
                  bulk("DOTO", obj) + hdr("DIAG", 0))
        print(describe(exchange(port, compile_req(None, "/tmp", argv, doti) + forged)))
    elif mode == "lookup":
        r = exchange(port, hdr("BOLT", 1) + hdr("RQST", 3) + pstr("CKEY", rest[0]))
        print(describe(r))
    elif mode in ("lookup-split", "lookup-twice", "lookup-trail"):
        req = hdr("BOLT", 1) + hdr("RQST", 3) + pstr("CKEY", rest[0])
        if mode == "lookup-split":
            print(describe(exchange(port, req[:50], then=req[50:])))
        elif mode == "lookup-twice":
            print(describe(exchange(port, req + req)))
        else:
            print(describe(exchange(port, req + b"xyz")))
    elif mode == "lookup-noread":
        # a client that asks and then does not read for SECS seconds
        # (a small receive buffer), then reads what still comes: GOT
        # with the reply's size if it came whole, else CUT and the bytes
        req = hdr("BOLT", 1) + hdr("RQST", 3) + pstr("CKEY", rest[0])
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(60)
        s.connect((HOST, port))
        s.sendall(req)
        print("SENT", flush=True)
        time.sleep(float(rest[1]))
        buf = b""
        try:
            while True:
                b = s.recv(65536)
                if not b:
                    break
                buf += b
        except OSError:
            pass
        s.close()
        whole = len(buf) >= 12 and buf.endswith(hdr("DOTD", 0))
        print("%s %d %s" % ("GOT" if whole else "CUT", len(buf), describe(buf)))
    elif mode in ("locate", "locate-split"):
        req = (hdr("BOLT", 1) + hdr("RQST", 6) + pstr("CKEY", rest[0]) +
               hdr("FLAG", int(rest[1])) + pstr("HOST", rest[2]))
        if mode == "locate":
            r = exchange(port, req)
        else:
            r = exchange(port, req[:40], then=req[40:])
        d = describe(r)
        if d == "LOCN":
            n = int(r[16:24], 16)
            d = "LOCN " + r[24:24 + n].decode("latin-1")
        print(d)
    elif mode == "store":
        obj = open(rest[1], "rb").read()
        r = exchange(port, hdr("BOLT", 1) + hdr("RQST", 5) + pstr("CKEY", rest[0]) +
                     bulk("DOTO", obj))
        print(describe(r))
    elif mode == "pump":
        pre, argv = split_dashdash(rest)
        cdir, fname, claim = pre[0], pre[1], pre[2]
        data = open(os.path.join(cdir, fname), "rb").read()
        h = hashlib.sha256(data).digest() if claim == "-" else bytes.fromhex(claim)
        m = hdr("BOLT", 1) + hdr("RQST", 5) + hdr("FLAG", 0x8) + pstr("CDIR", cdir)
        m += hdr("ARGC", len(argv))
        for a in argv:
            m += pstr("ARGV", a)
        m += hdr("NFIL", 2) + pstr("NAME", os.path.join(cdir, fname)) + pstr("HASH", h)
        m += pstr("NAME", cdir) + hdr("DIRM", 0)
        print(pump_exchange(port, m, data))
    else:
        die("unknown bolt mode " + mode)


def pump_exchange(port, req, data, timeout=30.0):
    s = socket.create_connection((HOST, port), timeout=timeout)
    s.sendall(req)
    buf = b""

    def need(n):
        nonlocal buf
        while len(buf) < n:
            b = s.recv(65536)
            if not b:
                return False
            buf += b
        return True
    if not need(24):
        s.close()
        return "CLOSED"
    tok = buf[12:16].decode("latin-1")
    if tok != "NEED":
        s.close()
        return describe(buf)
    k = int(buf[16:24], 16)
    need(24 + 12 * k)
    buf = buf[24 + 12 * k:]
    if k:
        s.sendall(bulk("FILE", data))
    while True:
        b = s.recv(65536)
        if not b:
            break
        buf += b
    s.close()
    if len(buf) < 24:
        return "NEED%d CLOSED" % k
    toks = [buf[12:16].decode("latin-1")]
    if toks[0] == "CHIT":
        toks.append(buf[24:28].decode("latin-1"))
    if toks[0] == "EROR":
        n = int(buf[16:24], 16)
        toks.append(buf[24:24 + n].decode("latin-1"))
    return "NEED%d %s" % (k, " ".join(toks))


def crash_loop(args):
    """crashloop BOLTCCD BOLTCC CACHEDIR WORKDIR ROUNDS SECONDS

    Each round: start boltccd in its own session on a fresh port, compile
    a few translation units through boltcc (one new each round, so every
    round stores), SIGKILL the daemon and its workers at a random moment
    (often while they store).  Every object that boltcc produced must
    equal the local compile of the same source: nothing corrupt is ever
    served.  Prints "rounds N served M mismatches K"."""
    boltccd, boltcc, cachedir, work, rounds, budget = args
    rounds = int(rounds)
    budget = float(budget)
    rng = random.Random(1234)
    t_end = time.time() + budget
    local = {}
    srcs = []
    mismatches = 0
    served = 0
    done = 0
    env = dict(os.environ)
    env["BOLTCC_DIR"] = os.path.join(work, "client")
    os.makedirs(env["BOLTCC_DIR"], exist_ok=True)
    env.pop("DISTCC_FALLBACK", None)
    env["DISTCC_BACKOFF_PERIOD"] = "0"
    for r in range(rounds):
        if time.time() > t_end:
            break
        # one new source per round, plus two old ones (hits)
        name = "u%03d.c" % r
        with open(os.path.join(work, name), "w") as f:
            f.write("static const char tag[] = \"round %d\";\n"
                    "const char *get_%d(void) { return tag; }\n"
                    "int calc_%d(int x) { int i, s = 0;\n"
                    "  for (i = 0; i < x; i++) s += i * %d;\n"
                    "  return s; }\n" % (r, r, r, r + 1))
        srcs.append(name)
        lo = os.path.join(work, name[:-2] + ".local.o")
        subprocess.run(["gcc", "-O2", "-c", name, "-o", lo], cwd=work, check=True)
        local[name] = open(lo, "rb").read()
        s = socket.socket()
        s.bind((HOST, 0))
        port = s.getsockname()[1]
        s.close()
        d = subprocess.Popen([boltccd, "--no-detach", "--listen", HOST, "--port",
                              str(port), "--stats-port", "0", "--jobs", "2",
                              "--cache-dir", cachedir, "--cache-size", "100K",
                              "--log-file", os.path.join(work, "crash-daemon.log")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        up = False
        for _ in range(400):
            try:
                socket.create_connection((HOST, port), timeout=0.2).close()
                up = True
                break
            except OSError:
                time.sleep(0.005)
        if not up:
            os.killpg(d.pid, signal.SIGKILL)
            d.wait()
            die("daemon did not start in round %d" % r)
        env["BOLTCC_HOSTS"] = "%s:%d,bolt" % (HOST, port)
        # distinct sources: two boltcc writing one output file could race
        # (a local fallback writes its object in place)
        batch = [name] + rng.sample(srcs[:-1], min(2, len(srcs) - 1))
        procs = []
        for src in batch:
            out = os.path.join(work, "%s.r%d.o" % (src[:-2], r))
            p = subprocess.Popen([boltcc, "gcc", "-O2", "-c", src, "-o", out],
                                 cwd=work, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            procs.append((p, src, out))
        # often mid-compile, often mid-store, sometimes after all is done:
        # every tenth round lets the jobs finish first, so that slow
        # builds (sanitizers, a loaded machine) still store some entries
        if r % 10 == 9:
            t_wait = time.time() + 20
            while time.time() < t_wait and any(p.poll() is None
                                               for p, _, _ in procs):
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.5))
        else:
            time.sleep(rng.uniform(0.0, 0.25))
        os.killpg(d.pid, signal.SIGKILL)
        d.wait()
        for p, src, out in procs:
            p.wait()
            if p.returncode != 0 or not os.path.exists(out):
                continue
            served += 1
            if open(out, "rb").read() != local[src]:
                mismatches += 1
                sys.stderr.write("MISMATCH %s round %d\n" % (src, r))
            os.unlink(out)
        done += 1
    print("rounds %d served %d mismatches %d" % (done, served, mismatches))


def main():
    if len(sys.argv) < 2:
        die("usage: see the docstring")
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "cstat":
        v = cache_stats(int(args[0]))
        print(v.get(args[1], "missing") if v else "nocache")
    elif cmd == "dstat":
        v = json.loads(http_get(int(args[0]), "/stats.json").decode())
        print(v.get(args[1], "missing"))
    elif cmd == "identity":
        print(daemon_identity(args[0]))
    elif cmd == "key":
        pre, argv = split_dashdash(args)
        ident, cdir, flags, doti = pre
        print(key_of(ident, None if cdir == "-" else cdir, int(flags),
                     open(doti, "rb").read(), argv))
    elif cmd == "pumpkey":
        pre, argv = split_dashdash(args)
        ident, cdir, fname = pre
        data = open(os.path.join(cdir, fname), "rb").read()
        print(pump_key_of(ident, cdir, 0, argv, [
            ("F", os.path.join(cdir, fname), hashlib.sha256(data).hexdigest()),
            ("D", cdir, "")]))
    elif cmd == "bolt":
        cmd_bolt(args)
    elif cmd == "crashloop":
        crash_loop(args)
    else:
        die("unknown command " + cmd)


if __name__ == "__main__":
    main()
