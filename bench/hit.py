#!/usr/bin/env python3
"""hit.py - the time of one cache hit, side by side: boltcc served by a
loopback boltccd (the farm), boltcc served by its local tier
(client/hitcache.h), ccache in direct mode, and the compile itself.  Run
through bench/hit.sh; see bench/README.md ("Hit bench").

One translation unit (zlib's deflate.c from Debian's source package at
-O2, as in issue 20; BENCH_HIT_FILE picks another of zlib's files), each
tool timed by hyperfine -N (no shell) in turns: BENCH_ROUNDS rounds
(default 3) of BENCH_RUNS runs (default 30) each, every round running
every tool, so load that comes and goes touches all of them alike.
Reported: the median over rounds of each round's mean wall time, and its
user and system CPU, then each tool's ratio to ccache's hit.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench  # noqa: E402
import cache  # noqa: E402  (start_daemon)

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
RUNS = int(os.environ.get("BENCH_RUNS", "30"))
FILE = os.environ.get("BENCH_HIT_FILE", "deflate.c")
FLAGS = ["-O2"]


def say(m=""):
    print(m, flush=True)


def hyperfine(cmd, env, cwd, out):
    subprocess.run(["hyperfine", "-N", "-w", "3", "-r", str(RUNS),
                    "--style", "none", "--export-json", out, " ".join(cmd)],
                   env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    r = json.load(open(out))["results"][0]
    return r["mean"], r["stddev"], r["user"], r["system"]


def main():
    for tool in ("hyperfine", "ccache"):
        if not shutil.which(tool):
            raise SystemExit("bench: %s is not installed (apt-get install %s)"
                             % (tool, tool))
    tmp = tempfile.mkdtemp(prefix="boltcc-hitbench.")
    try:
        z = bench.fetch_source("zlib", os.path.join("zlib-*", "deflate.c"),
                               "zlib")
        if z is None:
            raise SystemExit("bench: cannot fetch zlib's Debian source")
        src = os.path.join(tmp, "z")
        shutil.copytree(z[0], src)
        port, _, _ = cache.start_daemon(tmp, "boltccd-hit",
                                        ["--cache-dir", os.path.join(tmp, "dc")])
        base = dict(os.environ)
        for v in ("CCACHE_PREFIX", "DISTCC_HOSTS", "BOLTCC_HOSTS"):
            base.pop(v, None)
        state = os.path.join(tmp, "state")
        os.makedirs(state)
        bolt = dict(base, BOLTCC_DIR=state, DISTCC_FALLBACK="0",
                    BOLTCC_HOSTS="127.0.0.1:%d,bolt" % port)
        farm = dict(bolt, BOLTCC_LOCAL_CACHE_SIZE="0")
        cc = dict(base, CCACHE_DIR=os.path.join(tmp, "ccache"),
                  CCACHE_DIRECT="1")
        obj = os.path.join(tmp, "x.o")
        tools = [
            ("gcc (the compile)", ["gcc"], base),
            ("boltcc, farm hit", bench.BOLTCC.split() + ["gcc"], farm),
            ("boltcc, local-tier hit", bench.BOLTCC.split() + ["gcc"], bolt),
            ("ccache hit (direct mode)", ["ccache", "gcc"], cc),
        ]
        # fill the caches: the farm's and the local tier (one compile),
        # ccache's (one compile), each checked against the local object
        ref = os.path.join(tmp, "ref.o")
        subprocess.run(["gcc"] + FLAGS + ["-c", FILE, "-o", ref], cwd=src,
                       check=True)
        for label, pre, env in tools[1:]:
            subprocess.run(pre + FLAGS + ["-c", FILE, "-o", obj], cwd=src,
                           env=env, check=True)
            if open(obj, "rb").read() != open(ref, "rb").read():
                raise SystemExit("bench: %s: object differs from gcc's" % label)
        gcc = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True,
                             text=True).stdout.strip()
        say("boltcc hit bench: zlib %s %s, gcc %s, %d CPUs, %d rounds x %d "
            "runs (hyperfine -N), load %s" % (
                FILE, " ".join(FLAGS), gcc, os.cpu_count() or 0, ROUNDS, RUNS,
                open("/proc/loadavg").read().split()[0]
                if os.path.exists("/proc/loadavg") else "?"))
        res = {t[0]: [] for t in tools}
        for rnd in range(ROUNDS):
            for label, pre, env in tools:
                res[label].append(hyperfine(
                    pre + FLAGS + ["-c", FILE, "-o", obj], env, src,
                    os.path.join(tmp, "h.json")))
        rows = []
        for label, _, _ in tools:
            rows.append((label,) + tuple(
                statistics.median(r[k] for r in res[label]) * 1000
                for k in range(4)))
        ref_ms = rows[-1][1]	# ccache's hit
        say("   %-26s %9s %8s %8s %8s %9s" % ("", "wall ms", "± ms", "user",
                                              "sys", "/ ccache"))
        for label, m, sd, u, s in rows:
            say("   %-26s %9.2f %8.2f %8.2f %8.2f %9.2f" % (
                label, m, sd, u, s, m / ref_ms))
        for label, _, _ in tools:
            say("   %-26s every round: %s ms" % (label, " ".join(
                "%.2f" % (r[0] * 1000) for r in res[label])))
        # the local-tier row must have been served by the local tier
        c = bench.client_counters(bolt, ("cache_hits_local",))
        say("   client: cache_hits_local %d" % c["cache_hits_local"])
        if c["cache_hits_local"] < ROUNDS * RUNS:
            raise SystemExit("bench: the local-tier runs were not all "
                             "local hits")
    finally:
        bench.finish(tmp)


if __name__ == "__main__":
    main()
