#!/usr/bin/env python3
"""cache.py - the artifact cache side by side with ccache, in one run.
Run through bench/cache.sh; see bench/README.md ("Cache bench").

A real multi-file C project (Lua 5.4 from Debian's source package, as in
bench.py part B) is built with make -jJ, every translation unit compiled
through:

  boltcc, cache off     boltccd --no-cache, BOLTCC_CACHE=0 (baseline)
  boltcc, cache cold    a fresh cache on the daemon
  boltcc, cache warm    the same build again from a clean tree: this
                        machine's local tier answers (client/hitcache.h)
  boltcc, farm warm     the same with the local tier off
                        (BOLTCC_LOCAL_CACHE_SIZE=0): every hit from boltccd
  ccache cold / warm    direct mode, a fresh CCACHE_DIR, same gcc

BENCH_PROJECT=zlib builds zlib's 15 library sources instead of Lua.

In boltcc's default mode toward boltccd (BOLT pump; BENCH_MODE=plain for
plain mode).  Each configuration runs BENCH_REPS times, interleaved.  Reported: the
median wall time, and the median CPU time of everything the build used
(make and its children, plus the boltccd serving it and its workers and
compilers, from /proc), which a loaded machine disturbs much less than
wall time.  Ratios, on both: cold/off (target <= 1.03), and boltcc warm /
ccache warm and farm warm / ccache warm (target <= 0.8, issue 20).
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import resource
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench  # noqa: E402  (daemons, ports, project fetching)

REPS = int(os.environ.get("BENCH_REPS", "5"))
JOBS = int(os.environ.get("BENCH_J", "4"))
CFLAGS = bench.CFLAGS
# boltcc's default toward boltccd is pump mode; BENCH_MODE=plain measures
# plain mode (hosts written ",plain").
MODE = os.environ.get("BENCH_MODE", "pump")
if MODE not in ("pump", "plain"):
    raise SystemExit("bench: BENCH_MODE is pump or plain")
HOSTOPT = ",bolt" if MODE == "pump" else ",bolt,plain"


def say(m=""):
    print(m, flush=True)


def start_daemon(tmp, name, extra):
    port, sport = bench.free_ports(2)
    bench.start([bench.BOLTCCD, "--no-detach", "--listen", "127.0.0.1", "--port",
                 str(port), "--stats-port", str(sport), "--jobs",
                 str(os.cpu_count() or 2), "--log-file",
                 os.path.join(tmp, name + ".log"), "--log-level", "warn"] + extra,
                os.path.join(tmp, name + ".out"))
    if not bench.wait_http(sport):
        raise SystemExit("bench: %s did not start" % name)
    return port, sport, bench.procs[-1].pid


def proc_cpu(pid):
    """CPU seconds of pid and its reaped descendants (Linux /proc)."""
    if pid is None:
        return 0.0
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in f[11:15]) / float(tick)


def write_makefile(out, srcdir, cs, extra):
    objs = []
    with open(os.path.join(out, "Makefile"), "w") as mk:
        for c in cs:
            o = c.replace("/", "_")[:-2] + ".o"
            objs.append(o)
            mk.write("%s: %s\n\t$(CC) %s %s -c $< -o $@\n"
                     % (o, os.path.join(srcdir, c), CFLAGS, extra))
        mk.write("all: %s\n" % " ".join(objs))
    return objs


def build(out, cc, env, daemon_pid=None):
    """(wall seconds, CPU seconds of the build and its daemon)"""
    for f in os.listdir(out):
        if f.endswith(".o"):
            os.unlink(os.path.join(out, f))
    d0 = proc_cpu(daemon_pid)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["make", "-s", "-C", out, "-j%d" % JOBS, "CC=" + cc, "all"],
                       env=env, stdout=subprocess.DEVNULL,
                       stderr=open(os.path.join(out, "make.err"), "ab"))
    dt = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit("bench: build with %s failed (%s/make.err)" % (cc, out))
    time.sleep(0.3)	# let the daemon reap workers that store after replying
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    cpu += proc_cpu(daemon_pid) - d0
    return dt, cpu


def same_objects(a, b, objs):
    return all(open(os.path.join(a, o), "rb").read() == open(os.path.join(b, o), "rb").read()
               for o in objs)


def main():
    if not shutil.which("ccache"):
        raise SystemExit("bench: ccache is not installed (apt-get install ccache)")
    tmp = tempfile.mkdtemp(prefix="boltcc-cachebench.")
    try:
        srcdir, cs, extra, desc = bench.project(tmp)
        gcc = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True,
                             text=True).stdout.strip()
        say("boltcc cache bench: %s, %d translation units, %s %s, make -j%d, "
            "gcc %s, %d CPUs, %d reps (median)" % (desc, len(cs), CFLAGS, extra,
                                                  JOBS, gcc, os.cpu_count() or 0, REPS))
        say("   boltcc mode toward boltccd: %s (BENCH_MODE=pump|plain; hosts "
            "written '%s')" % (MODE, HOSTOPT))
        off_port, _, off_pid = start_daemon(tmp, "boltccd-nocache", ["--no-cache"])
        times = {k: [] for k in ("off", "cold", "warm", "fwarm", "ccold",
                                 "cwarm", "local")}
        cpus = {k: [] for k in times}
        dirs = {}
        objs = None
        for k in times:
            dirs[k] = os.path.join(tmp, "build-" + k)
            os.makedirs(dirs[k])
            objs = write_makefile(dirs[k], srcdir, cs, extra)
        base_env = dict(os.environ)
        for v in ("CCACHE_PREFIX", "DISTCC_HOSTS", "BOLTCC_HOSTS"):
            base_env.pop(v, None)
        bstate = os.path.join(tmp, "boltcc-state")
        os.makedirs(bstate)
        for rep in range(REPS):
            # a fresh daemon cache each rep, so "cold" is cold
            cport, csport, cpid = start_daemon(tmp, "boltccd-cache-%d" % rep,
                                         ["--cache-dir", os.path.join(tmp, "cache-%d" % rep)])
            env_off = dict(base_env, BOLTCC_DIR=bstate, DISTCC_FALLBACK="0",
                           BOLTCC_CACHE="0", BOLTCC_HOSTS="127.0.0.1:%d%s" % (off_port, HOSTOPT))
            env_c = dict(base_env, BOLTCC_DIR=bstate, DISTCC_FALLBACK="0",
                         BOLTCC_HOSTS="127.0.0.1:%d%s" % (cport, HOSTOPT))
            env_f = dict(env_c, BOLTCC_LOCAL_CACHE_SIZE="0")
            # a fresh local tier each rep, so "cold" fills it
            shutil.rmtree(os.path.join(bstate, "hits"), ignore_errors=True)
            ccdir = os.path.join(tmp, "ccache-%d" % rep)
            env_cc = dict(base_env, CCACHE_DIR=ccdir, CCACHE_DIRECT="1")
            for k, cc, env, pid in (
                    ("local", "gcc", base_env, None),
                    ("off", bench.BOLTCC + " gcc", env_off, off_pid),
                    ("cold", bench.BOLTCC + " gcc", env_c, cpid),
                    ("warm", bench.BOLTCC + " gcc", env_c, cpid),
                    ("fwarm", bench.BOLTCC + " gcc", env_f, cpid),
                    ("ccold", "ccache gcc", env_cc, None),
                    ("cwarm", "ccache gcc", env_cc, None)):
                # a rebuild happens where the build was: warm ones run in
                # their cold build's directory (kept objects copied out)
                run = dirs[{"warm": "cold", "fwarm": "cold",
                            "cwarm": "ccold"}.get(k, k)]
                w, c = build(run, cc, env, pid)
                times[k].append(w)
                cpus[k].append(c)
                if run != dirs[k]:
                    for o in objs:
                        shutil.copyfile(os.path.join(run, o),
                                        os.path.join(dirs[k], o))
            st = bench.dcc.http_get(csport, "/stats.json", 5)
            body = st.split(b"\n\n", 1)[-1] if b"\r\n\r\n" not in st else st.split(b"\r\n\r\n", 1)[1]
            import json
            c = json.loads(body.decode())["cache"]
            say("   rep %d: cache hits %d, misses %d, stores %d, entries %d (%d bytes)"
                % (rep + 1, c["hits"], c["misses"], c["stores"], c["entries"],
                   c["stored_bytes"]))
        cl = bench.client_counters(dict(base_env, BOLTCC_DIR=bstate), (
            "jobs_pump", "cache_hits", "cache_hits_local", "cache_hits_direct",
            "cache_misses"))
        say("   client: %s" % ", ".join("%s %d" % kv for kv in cl.items()))
        ok = all(same_objects(dirs["local"], dirs[k], objs)
                 for k in ("off", "cold", "warm", "fwarm"))
        med = {k: statistics.median(v) for k, v in times.items()}
        cmed = {k: statistics.median(v) for k, v in cpus.items()}
        rows = [("local gcc (no tool)", "local"), ("boltcc, cache off", "off"),
                ("boltcc, cache cold", "cold"), ("boltcc, cache warm", "warm"),
                ("boltcc, farm warm", "fwarm"),
                ("ccache cold", "ccold"), ("ccache warm (direct)", "cwarm")]
        say("   %-22s %8s %8s %9s  %s" % ("build", "wall s", "min s", "CPU s",
                                          "all runs: wall/CPU"))
        for label, k in rows:
            say("   %-22s %8.2f %8.2f %9.2f  %s" % (
                label, med[k], min(times[k]), cmed[k],
                " ".join("%.2f/%.2f" % (t, c) for t, c in zip(times[k], cpus[k]))))
        say("   boltcc objects identical to local gcc: %s" % ("yes" if ok else "NO"))
        say("   ratios (median; best-of-%d in brackets, the least disturbed by"
            " other load)" % REPS)
        for name, a, b, target, le in (
                ("cold with cache / cache off", "cold", "off", 1.03, True),
                ("boltcc warm / ccache warm  ", "warm", "cwarm", 0.8, True),
                ("farm warm / ccache warm    ", "fwarm", "cwarm", 0.8, True)):
            rw, rc = med[a] / med[b], cmed[a] / cmed[b]
            bw, bcpu = min(times[a]) / min(times[b]), min(cpus[a]) / min(cpus[b])
            met = (lambda r: r <= target) if le else (lambda r: r < target)
            say("   %s  wall %.3f [%.3f] (%s), CPU %.3f [%.3f] (%s)  target %s %.2f"
                % (name, rw, bw, "met" if met(rw) else "NOT met", rc, bcpu,
                   "met" if met(rc) else "NOT met", "<=" if le else "<", target))
    finally:
        bench.finish(tmp)


if __name__ == "__main__":
    main()
