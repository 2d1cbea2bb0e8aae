#!/usr/bin/env python3
"""bench/cluster.py - the farm at scale on a simulated network
(tests/cluster/cluster.py: hosts as network namespaces, link profiles by
tc tbf + a delay relay).  Run as root.  Not part of `make check`.

Part 1, makespan: N jobs of M ms each of the test compiler
tests/cluster/fakecc (sleeps, writes a deterministic object) on H hosts x
S slots, boltcc -> boltccd against stock distcc -> distccd with the same
host list, per link profile.  The jobs run under `xargs -P P` in the
client namespace (by default P = H * S, one job per slot, and 1.5 times
that, the `make -j` the README advises); makespan is the wall time of the whole xargs, reported
as a ratio of the ideal (N * M / (H * S)).  Every source is distinct (no
cache hits).  Both clients run with DISTCC_FALLBACK=0 and the daemons'
compile counters are checked, so a local fallback cannot flatter a row.

Stock distccd (Debian 3.4) runs only compilers that have an entry in
/usr/lib/distcc: the bench adds the symlink /usr/lib/distcc/fakecc (to
fakecc) for the distcc rows and removes it afterwards (only if it made
it).  Every daemon finds fakecc on its PATH; boltccd allows it with
--allow-compiler fakecc.

Part 2, a real project: Lua 5.4 from Debian's sources (as bench/bench.py
fetches it; else boltcc's own sources) compiled with gcc -O2 through
boltcc in four modes, per profile, with fresh daemons (empty caches and
pump stores) for each: plain LZO (",lzo,distcc": distcc protocol 2),
plain zstd (",plain,bolt"), pump LZO (",cpp,lzo,distcc": protocol 3),
pump zstd (",bolt": the BOLT pump, boltcc's default toward boltccd).
Measured: wall time and the
client's bytes_sent / bytes_received ($BOLTCC_DIR/stats).  All "hosts"
share this machine's CPUs, so build time here is bound by the CPUs, not by
the hosts; the bytes are what the links carry.

    python3 bench/cluster.py makespan --build /tmp/build-x
    python3 bench/cluster.py project --build /tmp/build-x
    options: --profiles tb5,10gbe,1gbe --hosts 8 --slots 2 --jobs 512
             --ms 200 --parallel 16,24 --clients boltcc,distcc --json FILE
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
import cluster  # noqa: E402

DISTCC_WL = "/usr/lib/distcc"


def say(msg=""):
    print(msg, flush=True)


def loadavg():
    try:
        return open("/proc/loadavg").read().split()[0:3]
    except OSError:
        return ["?"]


def daemon_counter(c, i, field="dcc_compile_ok"):
    """A counter from host i's text stats page (distccd and boltccd)."""
    for attempt in range(5):
        try:
            text = c.stats(i, "/")
            break
        except cluster.ClusterError:
            time.sleep(0.5)
    else:
        return -1
    m = re.search(r"^%s\s+(\d+)" % re.escape(field), text, re.M)
    return int(m.group(1)) if m else -1


def client_stats(d):
    """Sum of the client's counters in $BOLTCC_DIR/stats."""
    out = {}
    try:
        for line in open(os.path.join(d, "stats")):
            p = line.split()
            if len(p) == 2 and re.fullmatch(r"-?\d+", p[1]):
                out[p[0]] = out.get(p[0], 0) + int(p[1])
    except OSError:
        pass
    return out


class Whitelist:
    """/usr/lib/distcc/fakecc for stock distccd, removed afterwards."""

    def __init__(self, fakecc):
        self.path = os.path.join(DISTCC_WL, "fakecc")
        self.fakecc = fakecc
        self.made = False

    def __enter__(self):
        if not os.path.lexists(self.path) and os.path.isdir(DISTCC_WL):
            os.symlink(self.fakecc, self.path)
            self.made = True
        return self

    def __exit__(self, *exc):
        if self.made:
            os.unlink(self.path)


def write_jobs(d, n, tag):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "list"), "w") as lst:
        for i in range(n):
            with open(os.path.join(d, "s_%d.c" % i), "w") as f:
                f.write("int f_%s_%d(void) { return %d; }\n" % (tag, i, i))
            lst.write("%d\n" % i)


def makespan_run(a, client, profile, par):
    fakecc = os.path.join(a.build, "tests", "cluster", "fakecc")
    tmp = tempfile.mkdtemp(prefix="bc-bench-cluster.")
    os.chmod(tmp, 0o755)
    work = os.path.join(tmp, "src")
    cdir = os.path.join(tmp, "cdir")
    os.makedirs(cdir)
    write_jobs(work, a.jobs, "%s%s%d" % (client, profile, par))
    os.chmod(work, 0o777)
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(fakecc) + ":" + env["PATH"]
    for k in ("DISTCC_HOSTS", "BOLTCC_HOSTS", "DISTCC_DIR", "BOLTCC_DIR"):
        env.pop(k, None)
    env["DISTCC_FALLBACK"] = "0"
    distccd = client == "distcc"
    args = [] if distccd else ["--allow-compiler", "fakecc"] + a.daemon_args
    old_path = os.environ["PATH"]
    os.environ["PATH"] = env["PATH"]	# the daemons' PATH
    try:
        with cluster.Cluster(hosts=a.hosts, slots=a.slots, profile=profile,
                             build=a.build, distccd=distccd,
                             daemon_args=args, log_level="info") as c:
            if distccd:
                env["DISTCC_HOSTS"] = c.hosts_string(kind="plain")
                env["DISTCC_DIR"] = cdir
                tool = shutil.which("distcc") or "/usr/bin/distcc"
            else:
                env["BOLTCC_HOSTS"] = c.hosts_string()
                env["BOLTCC_DIR"] = cdir
                tool = os.path.join(a.build, "boltcc")
            argv = ["xargs", "-P", str(par), "-I@", tool, "fakecc",
                    "-DFAKECC_MS=%d" % a.ms, "-c", "s_@.c", "-o", "s_@.o"]
            t0 = time.monotonic()
            c0 = cpu_seconds()
            r = c.run_client(argv, cwd=work, env=env,
                             stdin=open(os.path.join(work, "list")),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            wall = time.monotonic() - t0
            cpu = cpu_seconds() - c0
            remote = [daemon_counter(c, i) for i in range(a.hosts)]
    finally:
        os.environ["PATH"] = old_path
    objs = len(glob.glob(os.path.join(work, "s_*.o")))
    err = r.stderr.decode("utf-8", "replace").strip().splitlines()
    cst = client_stats(cdir)
    if os.environ.get("BENCH_KEEP") != "1":
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        say("kept %s" % tmp)
    ideal = a.jobs * a.ms / 1000.0 / (a.hosts * a.slots)
    return {"client": client, "profile": profile, "parallel": par,
            "wall_s": round(wall, 3), "ideal_s": ideal,
            "ratio": round(wall / ideal, 3), "rc": r.returncode,
            "cpu_ms_per_job": round(cpu * 1000.0 / a.jobs, 1),
            "objects": objs, "remote_jobs": sum(x for x in remote if x > 0),
            "per_host": remote, "stderr": err[:5],
            "client_stats": {k: v for k, v in cst.items()
                             if "fail" in k or "local" in k}}


def cpu_seconds():
    """CPU time (user + system, all CPUs) the machine spent so far."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / float(
        os.sysconf("SC_CLK_TCK"))


def part_makespan(a):
    fakecc = os.path.join(a.build, "tests", "cluster", "fakecc")
    if not os.access(fakecc, os.X_OK):
        sys.exit("bench: %s missing: make -C %s tests/cluster/fakecc" %
                 (fakecc, a.build))
    rows = []
    say("## makespan: %d jobs x %d ms on %d hosts x %d slots (ideal %.2f s)"
        % (a.jobs, a.ms, a.hosts, a.slots,
           a.jobs * a.ms / 1000.0 / (a.hosts * a.slots)))
    say("%d rep(s), the clients taking turns within each rep; CPU ms/job is "
        "the whole machine's CPU time during the run (clients, daemons, "
        "relays, the test compiler) per job" % a.reps)
    say("load average before: %s" % " ".join(loadavg()))
    say()
    say("| profile | client | -P | rep | makespan s | / ideal | CPU ms/job "
        "| remote jobs | per host |")
    say("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    with Whitelist(fakecc):
        for prof in a.profiles:
            for par in a.parallel:
                for rep in range(a.reps):
                    for cl in a.clients:
                        row = makespan_run(a, cl, prof, par)
                        row["rep"] = rep + 1
                        rows.append(row)
                        say("| %s | %s | %d | %d | %.2f | %.3f | %.1f | "
                            "%d%s | %s |" % (
                                prof, cl, par, rep + 1, row["wall_s"],
                                row["ratio"], row["cpu_ms_per_job"],
                                row["remote_jobs"],
                                "" if row["rc"] == 0 and
                                row["objects"] == a.jobs
                                else " (rc %d, %d objects: %s)" % (
                                    row["rc"], row["objects"],
                                    "; ".join(row["stderr"][:2])),
                                " ".join(str(x) for x in row["per_host"])))
    if a.reps > 1:
        say()
        say("Medians over the reps:")
        say()
        say("| profile | client | -P | makespan s | / ideal | CPU ms/job |")
        say("| --- | --- | ---: | ---: | ---: | ---: |")
        for prof in a.profiles:
            for par in a.parallel:
                for cl in a.clients:
                    rs = [r for r in rows if r["profile"] == prof and
                          r["client"] == cl and r["parallel"] == par]
                    w = median([r["wall_s"] for r in rs])
                    say("| %s | %s | %d | %.2f | %.3f | %.1f |" % (
                        prof, cl, par, w, median([r["ratio"] for r in rs]),
                        median([r["cpu_ms_per_job"] for r in rs])))
    say("load average after: %s" % " ".join(loadavg()))
    return rows


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


MODES = [
    ("plain LZO (protocol 2)", ",lzo,distcc"),
    ("plain zstd (BOLT)", ",plain,bolt"),
    ("pump LZO (protocol 3)", ",cpp,lzo,distcc"),
    ("pump zstd (BOLT pump)", ",bolt"),
]


def lua_project():
    sys.path.insert(0, HERE)
    import bench  # noqa: E402  (project(): Lua 5.4 or boltcc's sources)
    tmp = tempfile.mkdtemp(prefix="bc-bench-proj.")
    d, cs, cflags, desc = bench.project(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    return d, cs, cflags, desc


def project_run(a, profile, suffix, proj):
    d, cs, cflags, _ = proj
    tmp = tempfile.mkdtemp(prefix="bc-bench-proj.")
    os.chmod(tmp, 0o755)
    cdir = os.path.join(tmp, "cdir")
    out = os.path.join(tmp, "out")
    os.makedirs(cdir)
    os.makedirs(out)
    env = dict(os.environ)
    for k in ("DISTCC_HOSTS", "BOLTCC_HOSTS", "DISTCC_DIR", "BOLTCC_DIR"):
        env.pop(k, None)
    env["DISTCC_FALLBACK"] = "0"
    env["BOLTCC_DIR"] = cdir
    with cluster.Cluster(hosts=a.hosts, slots=a.slots, profile=profile,
                         build=a.build, log_level="info") as c:
        hosts = " ".join("%s:%d/%d%s" % (h["addr"], c.port, h["slots"],
                                         suffix) for h in c.hosts)
        env["BOLTCC_HOSTS"] = hosts
        with open(os.path.join(tmp, "list"), "w") as f:
            for s in cs:
                f.write(s + "\n")
        res = {"profile": profile, "mode": suffix, "files": len(cs)}
        # build 1: everything cold; build 2: one more code-generation
        # flag (no effect on preprocessing), so every job misses the
        # cache again while the pump stores and the scan memo are warm
        for n, extra in ((1, ""), (2, "-fno-strict-aliasing")):
            for f in glob.glob(os.path.join(out, "*.o")):
                os.unlink(f)
            before = client_stats(cdir)
            cmd = ("%s gcc -O2 -g0 %s %s -c @ -o %s/$(basename @ .c).o" % (
                os.path.join(a.build, "boltcc"), cflags, extra, out))
            argv = ["xargs", "-P", str(a.hosts * a.slots), "-I@", "sh",
                    "-c", cmd]
            t0 = time.monotonic()
            r = c.run_client(argv, cwd=d, env=env,
                             stdin=open(os.path.join(tmp, "list")),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            wall = time.monotonic() - t0
            st = client_stats(cdir)
            for k in ("bytes_sent", "bytes_received", "jobs_pump",
                      "jobs_local", "cache_hits"):
                res["%s_%d" % (k, n)] = st.get(k, 0) - before.get(k, 0)
            res["wall_s_%d" % n] = round(wall, 3)
            res["rc_%d" % n] = r.returncode
            res["objects_%d" % n] = len(glob.glob(os.path.join(out, "*.o")))
            res["stderr_%d" % n] = r.stderr.decode(
                "utf-8", "replace").splitlines()[:3]
        remote = [daemon_counter(c, i) for i in range(a.hosts)]
        res["remote_jobs"] = sum(x for x in remote if x > 0)
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def part_project(a):
    proj = lua_project()
    rows = []
    say("## real project: %s, %d files, gcc -O2, %d hosts x %d slots, "
        "xargs -P %d" % (proj[3], len(proj[1]), a.hosts, a.slots,
                         a.hosts * a.slots))
    say("load average before: %s" % " ".join(loadavg()))
    say()
    say("Build 1 cold; build 2 adds -fno-strict-aliasing (cache misses, "
        "warm pump stores).  KiB: the client's bytes_sent / "
        "bytes_received.")
    say()
    say("| profile | mode | build 1 s | build 2 s | KiB sent 1 | KiB sent 2 "
        "| KiB recv 2 | remote jobs | pump jobs |")
    say("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for prof in a.profiles:
        for name, suffix in MODES:
            row = project_run(a, prof, suffix, proj)
            row["name"] = name
            rows.append(row)
            bad = ""
            for n in (1, 2):
                if row["rc_%d" % n] != 0 or \
                        row["objects_%d" % n] != row["files"]:
                    bad += " (build %d: rc %d, %d/%d objects: %s)" % (
                        n, row["rc_%d" % n], row["objects_%d" % n],
                        row["files"], "; ".join(row["stderr_%d" % n][:2]))
            say("| %s | %s | %.2f | %.2f%s | %.0f | %.0f | %.0f | %d | %d |"
                % (prof, name, row["wall_s_1"], row["wall_s_2"], bad,
                   row["bytes_sent_1"] / 1024.0, row["bytes_sent_2"] / 1024.0,
                   row["bytes_received_2"] / 1024.0, row["remote_jobs"],
                   row["jobs_pump_1"] + row["jobs_pump_2"]))
    say("load average after: %s" % " ".join(loadavg()))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("part", choices=["makespan", "project", "all"])
    p.add_argument("--build", default=os.environ.get(
        "BOLTCC_BUILDDIR", os.path.join(ROOT, "build", "normal")))
    p.add_argument("--profiles", default="tb5,10gbe,1gbe")
    p.add_argument("--clients", default="boltcc,distcc")
    p.add_argument("--hosts", type=int, default=8)
    p.add_argument("--slots", type=int, default=2)
    p.add_argument("--jobs", type=int, default=512)
    p.add_argument("--ms", type=int, default=200)
    p.add_argument("--parallel", default="",
                   help="xargs -P values, comma-separated (default: "
                   "hosts*slots, and 1.5 times that)")
    p.add_argument("--reps", type=int, default=1,
                   help="runs of each configuration, clients taking turns "
                   "(the table ends with the medians)")
    p.add_argument("--json", default=None)
    p.add_argument("--tmp", default=None,
                   help="where the sources, objects, client state and "
                   "the daemons' caches go (default: /dev/shm when it is "
                   "a writable tmpfs, else $TMPDIR or /tmp)")
    p.add_argument("--daemon-arg", dest="daemon_args", action="append",
                   default=[], help="extra boltccd argument (repeatable)")
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    if a.tmp is None and os.path.isdir("/dev/shm") and \
            os.access("/dev/shm", os.W_OK) and \
            subprocess.run(["stat", "-f", "-c", "%T", "/dev/shm"],
                           capture_output=True,
                           text=True).stdout.strip() == "tmpfs":
        a.tmp = "/dev/shm"
    if a.tmp is not None:
        # Every file of the run (and distcc's temp files: the clients and
        # daemons inherit TMPDIR) on a memory file system: the hosts are
        # simulated, and file creation on this machine's disk (ext4
        # without a journal) slows down by milliseconds under the churn
        # of a build, for every client alike (bench/README.md).
        os.environ["TMPDIR"] = a.tmp
        tempfile.tempdir = None
    a.profiles = [x for x in a.profiles.split(",") if x]
    a.clients = [x for x in a.clients.split(",") if x]
    a.parallel = [int(x) for x in a.parallel.split(",") if x] or \
        [a.hosts * a.slots, a.hosts * a.slots * 3 // 2]
    why = cluster.can_run()
    if why is not None:
        say("bench: cannot create network namespaces here: %s" % why)
        return 77
    say("date: %s; machine: %d CPUs; command: %s" % (
        time.strftime("%Y-%m-%d %H:%M %Z"), os.cpu_count() or 0,
        " ".join(sys.argv)))
    say("files of the run under: %s" % (a.tmp or tempfile.gettempdir()))
    res = {}
    if a.part in ("makespan", "all"):
        res["makespan"] = part_makespan(a)
        say()
    if a.part in ("project", "all"):
        res["project"] = part_project(a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
