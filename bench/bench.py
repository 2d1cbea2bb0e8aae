#!/usr/bin/env python3
"""bench.py - side-by-side timings of local gcc, boltcc -> boltccd, and
distcc -> distccd (and ccache) on this machine.  Run through bench/run.sh.

Part A: per-job cost.  N tiny translation units compiled one after another
        (no parallelism), so the numbers are the fixed cost each tool adds
        to a compile: ms/job and the extra over a local compile.
Part B: a real multi-file C project (Lua 5.4 from Debian's sources if it
        can be fetched, else boltcc's own sources, else the bundled sample),
        every translation unit compiled with make: locally -j2, through
        boltcc -j4 and through distcc -j4.  Wall times and ratios.

Everything runs on 127.0.0.1; daemons are started on free ports and
stopped at the end.  Nothing here is part of `make check`.
"""
import glob
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import dcc  # noqa: E402  (free ports, stats page)

BUILD = os.environ.get("BOLTCC_BUILDDIR", os.path.join(ROOT, "build", "normal"))
BOLTCC = os.path.join(BUILD, "boltcc")
BOLTCCD = os.path.join(BUILD, "boltccd")
N = int(os.environ.get("BENCH_N", "300"))
CFLAGS = os.environ.get("BENCH_CFLAGS", "-O2 -g0")
HAVE = {t: shutil.which(t) is not None for t in ("distcc", "distccd", "ccache", "gcc")}

procs = []


def say(msg=""):
    print(msg, flush=True)


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_http(port, limit=15):
    end = time.time() + limit
    while time.time() < end:
        try:
            if dcc.http_get(port, "/", 2).startswith(b"HTTP/"):
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def start(argv, log):
    p = subprocess.Popen(argv, stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def finish(tmp):
    """Stop every process started, and remove tmp (kept with BENCH_KEEP=1)."""
    stop_all()
    if os.environ.get("BENCH_KEEP") != "1":
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("kept " + tmp, flush=True)


def client_counters(env, names):
    """The client counters names of boltcc --stats --json under env (a
    BOLTCC_DIR), as {name: int}; absent ones are 0."""
    import json
    out = subprocess.run(BOLTCC.split() + ["--stats", "--json"], env=env,
                         capture_output=True, text=True).stdout
    try:
        flat = json.dumps(json.loads(out))
    except ValueError:
        return {n: 0 for n in names}
    got = {}
    for n in names:
        m = re.search(r'"%s": (\d+)' % re.escape(n), flat)
        got[n] = int(m.group(1)) if m else 0
    return got


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


def tree_cpu(root):
    """CPU seconds of root and all its live descendants, each with its
    reaped children (Linux /proc; 0 elsewhere)."""
    if root is None or not os.path.isdir("/proc/self"):
        return 0.0
    kids, own = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            f = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(f[1]), []).append(int(d))
        own[int(d)] = sum(int(x) for x in f[11:15])
    tot, todo = 0, [root]
    while todo:
        p = todo.pop()
        tot += own.get(p, 0)
        todo += kids.get(p, [])
    return tot / float(os.sysconf("SC_CLK_TCK"))


def counter(port, field="dcc_compile_ok"):
    try:
        return int(dcc.stats_text(port).get(field, "-1"))
    except (OSError, ValueError):
        return -1


def boltccd_help():
    try:
        return subprocess.run([BOLTCCD, "--help"], capture_output=True,
                              text=True).stdout
    except OSError:
        return ""


class Daemons:
    """boltccd without its artifact cache (the farm's own cost), boltccd with
    a fresh cache (cold, then warm), and stock distccd."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.dport = self.dsport = None
        self.cport = self.csport = None
        jobs = str(os.cpu_count() or 2)
        helptext = boltccd_help()
        has_cache = "--cache-dir" in helptext
        base = [BOLTCCD, "--no-detach", "--listen", "127.0.0.1", "--jobs", jobs]
        self.bport, self.bsport = free_ports(2)
        argv = base + ["--port", str(self.bport), "--stats-port", str(self.bsport),
                       "--log-file", os.path.join(tmp, "boltccd.log")]
        if "--no-cache" in helptext:
            argv.append("--no-cache")
        elif has_cache:
            argv += ["--cache-dir", os.path.join(tmp, "boltccd-nocache")]
        self.bpid = start(argv, os.path.join(tmp, "boltccd.out")).pid
        self.cpid = self.dpid = None
        if not wait_http(self.bsport):
            raise SystemExit("bench: boltccd did not start (see %s)" % tmp)
        if has_cache:
            self.cport, self.csport = free_ports(2)
            self.cpid = start(base + ["--port", str(self.cport), "--stats-port",
                                      str(self.csport), "--log-file",
                                      os.path.join(tmp, "boltccd-cache.log"),
                                      "--cache-dir", os.path.join(tmp, "boltccd-cache")],
                              os.path.join(tmp, "boltccd-cache.out")).pid
            if not wait_http(self.csport):
                say("bench: boltccd with cache did not start; cache rows skipped")
                self.cport = None
        if HAVE["distccd"]:
            self.dport, self.dsport = free_ports(2)
            os.chmod(tmp, 0o755)
            argv = ["distccd", "--daemon", "--no-detach", "--allow", "127.0.0.1",
                    "--listen", "127.0.0.1", "--port", str(self.dport),
                    "--stats", "--stats-port", str(self.dsport), "--jobs", jobs,
                    "--log-file", os.path.join(tmp, "distccd.log")]
            if os.getuid() == 0:
                argv += ["--user", "distccd"]
            open(os.path.join(tmp, "distccd.log"), "w").close()
            os.chmod(os.path.join(tmp, "distccd.log"), 0o666)
            self.dpid = start(argv, os.path.join(tmp, "distccd.out")).pid
            if not wait_http(self.dsport):
                say("bench: distccd did not start; distcc columns skipped")
                self.dport = None


def tool_envs(tmp, d):
    """Ordered list of (name, (compiler prefix, env additions, stats port))."""
    def state(name):
        p = os.path.join(tmp, "state-" + name)
        os.makedirs(p, exist_ok=True)
        return p

    # The client's local tier of the cache is off: these rows measure the
    # way to the daemon (its own cache in the +cache rows); the local tier
    # is measured by bench/hit.sh and bench/cache.sh.  With it on, the pump
    # row would be served by the tier the row before it filled.
    def bolt(name, hosts, sport):
        return (name, ([BOLTCC], {"BOLTCC_DIR": state(name.split(" ")[0].replace(">", "")),
                                  "BOLTCC_LOCAL_CACHE_SIZE": "0",
                                  "DISTCC_FALLBACK": "0", "BOLTCC_HOSTS": hosts}, sport))

    def stock(name, hosts, sport):
        return (name, (["distcc"], {"DISTCC_DIR": state(name.replace(">", "")),
                                    "DISTCC_FALLBACK": "0", "DISTCC_HOSTS": hosts}, sport))

    t = [("local gcc", ([], {}, None)),
         bolt("boltcc->boltccd", "127.0.0.1:%d,bolt" % d.bport, d.bsport),
         bolt("boltcc->boltccd pump", "127.0.0.1:%d,cpp,lzo,bolt" % d.bport, d.bsport)]
    if d.dport:
        t.append(stock("distcc->distccd", "127.0.0.1:%d,lzo" % d.dport, d.dsport))
        t.append(bolt("boltcc->distccd", "127.0.0.1:%d,lzo,distcc" % d.dport, d.dsport))
    t.append(stock("distcc->boltccd", "127.0.0.1:%d,lzo" % d.bport, d.bsport))
    if d.cport:
        # same state dir for cold and warm: only the daemon's cache differs
        t.append(bolt("boltcc->boltccd+cache (cold)", "127.0.0.1:%d,bolt" % d.cport, d.csport))
        t.append(bolt("boltcc->boltccd+cache (warm)", "127.0.0.1:%d,bolt" % d.cport, d.csport))
    return t


# ------------------------------------------------------------- part A
def part_a(tmp, d):
    src = os.path.join(tmp, "tiny")
    os.makedirs(src)
    for i in range(N):
        with open(os.path.join(src, "t%03d.c" % i), "w") as f:
            f.write("static int k%d = %d;\nint f%d(int x);\n"
                    "int f%d(int x) { return x * k%d + %d; }\n" % (i, i, i, i, i, i))
    files = sorted(glob.glob(os.path.join(src, "*.c")))
    say("== A. per-job cost: %d tiny translation units, one after another (%s)"
        % (N, CFLAGS))
    rows = []
    plan = tool_envs(tmp, d)
    if HAVE["ccache"]:
        cdir = os.path.join(tmp, "ccache")
        plan.append(("ccache (cold)", (["ccache"], {"CCACHE_DIR": cdir}, None)))
        plan.append(("ccache (warm)", (["ccache"], {"CCACHE_DIR": cdir}, None)))
    for name, (prefix, extra, sport) in plan:
        env = dict(os.environ)
        env.update(extra)
        out = os.path.join(tmp, "tiny-out")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        # Three untimed jobs first (files outside the measured set), so no
        # row pays for first-use work (compiler identity, default include
        # dirs, page cache) that the rows after it would not.
        for k in range(3):
            w = os.path.join(out, "warm%d-%d.c" % (k, len(rows)))
            with open(w, "w") as f:
                f.write("int w%d_%d(void) { return %d; }\n" % (k, len(rows), k))
            subprocess.run(prefix + ["gcc"] + CFLAGS.split() + ["-c", w, "-o", w[:-2] + ".o"],
                           env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        time.sleep(0.5 if sport else 0)     # daemons count a job just after replying
        before = counter(sport) if sport else None
        dpid = {d.bsport: d.bpid, d.csport: d.cpid, d.dsport: d.dpid}.get(sport)
        fails = 0
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        dcpu0 = tree_cpu(dpid)
        t0 = time.perf_counter()
        for f in files:
            o = os.path.join(out, os.path.basename(f)[:-2] + ".o")
            r = subprocess.run(prefix + ["gcc"] + CFLAGS.split() + ["-c", f, "-o", o],
                               env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            fails += r.returncode != 0
        dt = time.perf_counter() - t0
        remote = ""
        if sport:
            time.sleep(0.5)     # daemons count a job just after replying
            remote = "%d remote" % (counter(sport) - before)
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        cpu += tree_cpu(dpid) - dcpu0
        rows.append((name, dt, fails, remote, cpu))
    base = rows[0][1] / N * 1000.0
    cbase = rows[0][4] / N * 1000.0
    say("   %-29s %9s %9s %12s %8s %8s %10s  %s" % (
        "tool", "total s", "ms/job", "extra ms/job", "ratio", "cpu ms", "extra cpu",
        "notes"))
    for name, dt, fails, remote, cpu in rows:
        ms = dt / N * 1000.0
        cms = cpu / N * 1000.0
        notes = remote + ("  %d FAILED" % fails if fails else "")
        say("   %-29s %9.2f %9.2f %12.2f %7.2fx %8.2f %10.2f  %s"
            % (name, dt, ms, ms - base, ms / base, cms, cms - cbase, notes))
    target_lines(rows, base, cbase)
    say()


def target_lines(rows, base, cbase):
    """Issue 2's target: boltcc's added per-job cost at most half of
    distcc's, wall and CPU, for each boltcc->boltccd row."""
    ref = [r for r in rows if r[0] == "distcc->distccd"]
    if not ref:
        return
    dwall = ref[0][1] / N * 1000.0 - base
    dcpu = ref[0][4] / N * 1000.0 - cbase
    say("   target: boltcc's extra per job <= 0.50 x distcc's (distcc extra "
        "%.2f ms wall, %.2f ms cpu)" % (dwall, dcpu))
    for name, dt, _fails, _remote, cpu in rows:
        if not name.startswith("boltcc->boltccd"):
            continue
        w = (dt / N * 1000.0 - base) / dwall if dwall > 0 else float("nan")
        c = (cpu / N * 1000.0 - cbase) / dcpu if dcpu > 0 else float("nan")
        say("   %-29s extra / distcc extra = %5.2f wall, %5.2f cpu "
            "(target <= 0.50)%s" % (name, w, c,
                                    "" if w <= 0.5 and c <= 0.5 else "  NOT MET"))


# ------------------------------------------------------------- part B
def fetch_source(pkg, probe, what):
    """Debian's source package pkg, unpacked under build/bench-cache (the
    first directory matching the glob probe); every version the archive
    lists is tried, since a mirror may list one whose files it lacks.
    (dir, description) or None."""
    cache = os.path.join(ROOT, "build", "bench-cache")
    hits = glob.glob(os.path.join(cache, probe))
    if hits:
        return os.path.dirname(hits[0]), what + " (cached Debian source)"
    if os.environ.get("BENCH_FETCH", "1") == "0" or not shutil.which("apt-get"):
        return None
    added = None
    try:
        srcs = ""
        for f in glob.glob("/etc/apt/sources.list.d/*") + ["/etc/apt/sources.list"]:
            try:
                srcs += open(f).read()
            except OSError:
                pass
        if "deb-src" not in srcs and os.getuid() == 0:
            added = "/etc/apt/sources.list.d/boltcc-bench-src.sources"
            with open(added, "w") as f:
                f.write("# added by boltcc bench/run.sh to fetch sources\n"
                        "Types: deb-src\nURIs: http://deb.debian.org/debian\n"
                        "Suites: bookworm\nComponents: main\n"
                        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
            subprocess.run(["apt-get", "update", "-q"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
        if not shutil.which("dpkg-source") and os.getuid() == 0:
            subprocess.run(["apt-get", "install", "-y", "-q", "dpkg-dev"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=300)
        os.makedirs(cache, exist_ok=True)
        shown = subprocess.run(["apt-cache", "showsrc", pkg], capture_output=True,
                               text=True, timeout=60).stdout
        versions = sorted(set(re.findall(r"^Version: (\S+)", shown, re.M)),
                          reverse=True)
        for spec in [pkg] + ["%s=%s" % (pkg, v) for v in versions]:
            subprocess.run(["apt-get", "source", "-q", spec], cwd=cache,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=300)
            if glob.glob(os.path.join(cache, probe)):
                break
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        if added:
            os.unlink(added)
    hits = glob.glob(os.path.join(cache, probe))
    if hits:
        return os.path.dirname(hits[0]), what + " (Debian source package)"
    return None


def fetch_lua(tmp):
    """Lua 5.4 from Debian's source package; None if it cannot be fetched."""
    return fetch_source("lua5.4", os.path.join("lua5.4-*", "src", "lapi.c"),
                        "Lua 5.4")


# zlib's static library, as its Makefile builds it
ZLIB_SOURCES = ["adler32.c", "compress.c", "crc32.c", "deflate.c", "gzclose.c",
                "gzlib.c", "gzread.c", "gzwrite.c", "infback.c", "inffast.c",
                "inflate.c", "inftrees.c", "trees.c", "uncompr.c", "zutil.c"]


def project(tmp):
    """(source dir, list of .c, extra CFLAGS, description); BENCH_PROJECT
    picks zlib (its 15 library sources) or lua (the default)"""
    if os.environ.get("BENCH_PROJECT", "lua") == "zlib":
        z = fetch_source("zlib", os.path.join("zlib-*", "deflate.c"), "zlib")
        if z:
            return z[0], list(ZLIB_SOURCES), "-D_LARGEFILE64_SOURCE=1", z[1]
    lua = fetch_lua(tmp)
    if lua:
        d, desc = lua
        # Debian's patch includes a header its debian/rules generates.
        mh = os.path.join(d, "lua5.4-deb-multiarch.h")
        if not os.path.exists(mh):
            triple = subprocess.run(["gcc", "-dumpmachine"], capture_output=True,
                                    text=True).stdout.strip() or "x86_64-linux-gnu"
            with open(mh, "w") as f:
                f.write('#define DEB_HOST_MULTIARCH "%s"\n' % triple)
        cs = [os.path.basename(f) for f in sorted(glob.glob(os.path.join(d, "*.c")))
              if os.path.basename(f) not in ("onelua.c",)]
        return d, cs, "-DLUA_COMPAT_5_3 -DLUA_USE_POSIX", desc
    # boltcc's own sources: a real multi-file C project that is always here.
    cs = []
    for sub in ("common", "client", "daemon", "preproc", "cache"):
        cs += [os.path.join(sub, os.path.basename(f))
               for f in sorted(glob.glob(os.path.join(ROOT, sub, "*.c")))
               if os.path.getsize(f) > 0]
    if len(cs) >= 8 and os.path.exists(os.path.join(BUILD, "config.h")):
        pc = subprocess.run(["pkg-config", "--cflags", "libzstd", "lzo2", "libssh2",
                             "sqlite3"], capture_output=True, text=True).stdout.strip()
        return ROOT, cs, "-std=c11 -I%s -I%s -I%s/common %s" % (BUILD, ROOT, ROOT, pc), \
            "boltcc's own sources (%d files; Lua could not be fetched)" % len(cs)
    cs = [os.path.basename(f) for f in sorted(glob.glob(os.path.join(ROOT, "sample", "*.c")))]
    return os.path.join(ROOT, "sample"), cs, "", "the bundled sample (Lua could not be fetched)"


def part_b(tmp, d):
    srcdir, cs, extra, desc = project(tmp)
    say("== B. a real project: %s, %d translation units (%s %s)"
        % (desc, len(cs), CFLAGS, extra))
    runs = [(name, spec, 2 if name == "local gcc" else 4)
            for name, spec in tool_envs(tmp, d)]
    rows = []
    for label, (prefix, envx, sport), j in runs:
        out = os.path.join(tmp, "proj-" + "".join(c for c in label if c.isalnum()))
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        objs = []
        with open(os.path.join(out, "Makefile"), "w") as mk:
            for c in cs:
                o = c.replace("/", "_")[:-2] + ".o"
                objs.append(o)
                mk.write("%s: %s\n\t$(CC) %s %s -c $< -o $@\n"
                         % (o, os.path.join(srcdir, c), CFLAGS, extra))
            mk.write("all: %s\n" % " ".join(objs))
        env = dict(os.environ)
        env.update(envx)
        cc = " ".join(prefix + ["gcc"])
        before = counter(sport) if sport else None
        t0 = time.perf_counter()
        r = subprocess.run(["make", "-s", "-C", out, "-j%d" % j, "CC=" + cc, "all"],
                           env=env, stdout=subprocess.DEVNULL,
                           stderr=open(os.path.join(out, "make.err"), "wb"))
        dt = time.perf_counter() - t0
        note = "" if r.returncode == 0 else "FAILED (%s/make.err)" % out
        if sport:
            time.sleep(0.5)     # daemons count a job just after replying
            note = ("%d remote " % (counter(sport) - before)) + note
        rows.append(("%s -j%d" % (label, j), dt, note))
    base = rows[0][1]
    say("   %-34s %9s %8s  %s" % ("build", "wall s", "ratio", "notes"))
    for name, dt, note in rows:
        say("   %-34s %9.2f %7.2fx  %s" % (name, dt, dt / base, note))
    say()


def main():
    if not (os.access(BOLTCC, os.X_OK) and os.access(BOLTCCD, os.X_OK)):
        raise SystemExit("bench: build first (sh setup.sh) or set BOLTCC_BUILDDIR")
    tmp = tempfile.mkdtemp(prefix="boltcc-bench.")
    say("boltcc bench: %s, %d CPUs, gcc %s, daemons on 127.0.0.1 (same machine)"
        % (os.uname().sysname, os.cpu_count() or 0,
           subprocess.run(["gcc", "-dumpfullversion"], capture_output=True,
                          text=True).stdout.strip()))
    if not HAVE["distcc"]:
        say("(distcc not installed: distcc columns skipped)")
    try:
        d = Daemons(tmp)
        if os.environ.get("BENCH_PART", "AB").find("A") >= 0:
            part_a(tmp, d)
        if os.environ.get("BENCH_PART", "AB").find("B") >= 0:
            part_b(tmp, d)
    finally:
        finish(tmp)


if __name__ == "__main__":
    main()
