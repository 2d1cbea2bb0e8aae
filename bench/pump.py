#!/usr/bin/env python3
"""bench/pump.py - pump mode against plain mode on a real multi-file C
project (Lua 5.4 from Debian's sources, as bench/bench.py fetches it).

For each mode a fresh boltccd (own cache dir, hence an empty pump file
store) and a fresh client state dir; every translation unit is compiled
one after another, twice (first build: cold scan memo and empty store;
second build: warm memo, the daemon holds every header).  Measured:

* client CPU per job: user+sys of each boltcc process and everything it
  waited for (the local preprocessor in plain mode), from getrusage
  (RUSAGE_CHILDREN) around each job; the daemon is not included;
* scan time per TU: the client's pump_scan_us / pump_scans counters, cold
  (first build) and warm (second build);
* bytes on the wire: the client's bytes_sent, first and second build.

Modes: plain LZO (distcc protocol 2), plain zstd (BOLT), pump LZO (distcc
protocol 3), pump zstd (BOLT pump: content-addressed, zstd).
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (project(), start(), free_ports(), wait_http())

MODES = [
    ("plain LZO (protocol 2)", "/2,lzo,distcc"),
    ("plain zstd (BOLT)", "/2,bolt"),
    ("pump LZO (protocol 3)", "/2,cpp,lzo,distcc"),
    ("pump zstd (BOLT pump)", "/2,cpp,lzo,bolt"),
]


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def counters(cdir):
    out = subprocess.run([bench.BOLTCC, "--stats", "--json"], capture_output=True,
                         text=True, env=dict(os.environ, BOLTCC_DIR=cdir)).stdout
    try:
        return json.loads(out)["client"]["counters"]
    except (ValueError, KeyError):
        return {}


def build(srcdir, cs, extra, outdir, env):
    """Compile every TU once, sequentially; returns (cpu s, wall s, failures)."""
    cpu = wall = 0.0
    fails = 0
    for c in cs:
        o = os.path.join(outdir, c.replace("/", "_")[:-2] + ".o")
        argv = [bench.BOLTCC, "gcc"] + bench.CFLAGS.split() + extra.split() + \
            ["-c", os.path.join(srcdir, c), "-o", o]
        c0, t0 = cpu_children(), time.perf_counter()
        r = subprocess.run(argv, env=env, cwd=srcdir, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        wall += time.perf_counter() - t0
        cpu += cpu_children() - c0
        fails += r.returncode != 0
    return cpu, wall, fails


def main():
    tmp = tempfile.mkdtemp(prefix="boltcc-pumpbench.")
    srcdir, cs, extra, desc = bench.project(tmp)
    bench.say("== pump vs plain: %s, %d translation units (%s %s)"
              % (desc, len(cs), bench.CFLAGS, extra))
    rows = []
    try:
        for label, opts in MODES:
            port, sport = bench.free_ports(2)
            cache = os.path.join(tmp, "cache-%d" % port)
            bench.start([bench.BOLTCCD, "--no-detach", "--listen", "127.0.0.1",
                         "--port", str(port), "--stats-port", str(sport),
                         "--jobs", str(os.cpu_count() or 2), "--cache-dir", cache,
                         "--log-file", os.path.join(tmp, "d-%d.log" % port)],
                        os.path.join(tmp, "d-%d.out" % port))
            if not bench.wait_http(sport):
                raise SystemExit("bench: boltccd did not start")
            cdir = os.path.join(tmp, "client-%d" % port)
            os.makedirs(cdir)
            env = dict(os.environ, BOLTCC_DIR=cdir, DISTCC_FALLBACK="0",
                       BOLTCC_CACHE="0", BOLTCC_HOSTS="127.0.0.1:%d%s" % (port, opts))
            env.pop("DISTCC_HOSTS", None)
            res = []
            for n in (1, 2):
                out = os.path.join(tmp, "out-%d-%d" % (port, n))
                os.makedirs(out)
                k0 = counters(cdir)
                cpu, wall, fails = build(srcdir, cs, extra, out, env)
                k1 = counters(cdir)

                def d(name):
                    return k1.get(name, 0) - k0.get(name, 0)
                scans = d("pump_scans")
                res.append({
                    "cpu_ms": 1000.0 * cpu / len(cs), "wall_ms": 1000.0 * wall / len(cs),
                    "fails": fails, "sent": d("bytes_sent"),
                    "scan_us": d("pump_scan_us") / scans if scans else None,
                    "pump_jobs": d("jobs_pump"),
                    "fallbacks": sum(v - k0.get(k, 0) for k, v in k1.items()
                                     if k.startswith("pump_fallback_by_reason:")),
                    "needed": d("pump_files_needed"),
                })
            rows.append((label, res))
            bench.stop_all()
    finally:
        bench.stop_all()
        if os.environ.get("BENCH_KEEP") != "1":
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            bench.say("kept %s" % tmp)

    plain = rows[0][1][0]["cpu_ms"]
    bench.say("%-24s %10s %10s %9s %10s %10s %12s %12s %s" % (
        "mode", "cpu ms/job", "vs plain", "wall ms", "scan cold", "scan warm",
        "sent 1st", "sent 2nd", "notes"))
    for label, (a, b) in rows:
        notes = []
        if a["fails"] or b["fails"]:
            notes.append("FAILED %d/%d" % (a["fails"], b["fails"]))
        if a["pump_jobs"]:
            notes.append("%d pump jobs" % (a["pump_jobs"] + b["pump_jobs"]))
        if a["fallbacks"]:
            notes.append("%d scanner fallbacks/build" % a["fallbacks"])
        if a["needed"] or b["needed"]:
            notes.append("files sent %d then %d" % (a["needed"], b["needed"]))
        bench.say("%-24s %10.1f %9.2fx %9.1f %10s %10s %12d %12d %s" % (
            label, a["cpu_ms"], a["cpu_ms"] / plain if plain else 0, a["wall_ms"],
            "%.0f us" % a["scan_us"] if a["scan_us"] is not None else "-",
            "%.0f us" % b["scan_us"] if b["scan_us"] is not None else "-",
            a["sent"], b["sent"], ", ".join(notes)))
        if label.startswith("pump") or a is rows[0][1][0]:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
