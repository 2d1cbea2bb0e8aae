#!/usr/bin/env python3
"""faults.py - fault scenarios for a namespace farm (tests/cluster).

  faults.py --build DIR --work DIR [--scenario basic|all] [--profile P]
            [--files N] [--keep]

Builds a generated C project (N files, about half a second of gcc -O2
each, plus the bundled sample/) through boltcc on 3 boltccd hosts of 2
slots, injects faults mid-build, then checks:

  * make succeeds, every job compiled (no failed job),
  * every object is byte-identical to a local gcc build,
  * the client counted the faults (boltcc --stats --json).

Scenarios:
  basic  host 0's daemon SIGKILLed once 3 objects exist, host 1's link cut
         once 6 exist (the make check test, tests/cluster/t_cluster.sh)
  all    basic's two, then in a second build: host 0 restarted as a black
         hole (accepts, never answers), host 1's link back up with 30%
         packet drop, host 2 with 20 ms extra delay, host 1 cut again
         mid-build (tests/cluster/t_cluster_faults.sh, by hand)

Exit status: 0 pass, 1 fail, 77 cannot run here (not root, no netns).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cluster  # noqa: E402

CFLAGS = ["-O2", "-g0", "-Wall"]


def log(msg):
    print("faults: %s" % msg, flush=True)


def gen_project(d, nfiles, nfuncs=60):
    """N generated files + sample/'s sources, and a Makefile."""
    os.makedirs(d, exist_ok=True)
    srcdir = os.path.join(HERE, "..", "..", "sample")
    srcs = []
    for f in sorted(os.listdir(srcdir)):
        if f.endswith((".c", ".h")):
            shutil.copy(os.path.join(srcdir, f), d)
            if f.endswith(".c"):
                srcs.append(f)
    for n in range(nfiles):
        fn = []
        for k in range(nfuncs):
            fn.append(
                "static unsigned f%d(const unsigned *v, unsigned n, "
                "unsigned s) {\n"
                "  unsigned h = s ^ %du;\n"
                "  for (unsigned i = 0; i < n; i++) {\n"
                "    h = (h << 5) + h + v[i] * %du;\n"
                "    if (h & 1) h ^= v[(i * 7) %% n] >> 3; "
                "else h += v[(i + %d) %% n];\n"
                "    switch (h %% 5) { case 0: h *= 3; break; "
                "case 1: h ^= 0x9e3779b9u; break;\n"
                "      case 2: h += i * i; break; case 3: h -= s; break; "
                "default: h = ~h; }\n"
                "  }\n  return h;\n}\n" % (k, k * 31 + n, k * 2 + 1, k + n))
        body = "".join(fn)
        body += "unsigned gen%d(const unsigned *v, unsigned n) {\n" % n
        body += "  unsigned h = %du;\n" % n
        body += "".join("  h += f%d(v, n, h);\n" % k for k in range(nfuncs))
        body += "  return h;\n}\n"
        name = "gen%02d.c" % n
        with open(os.path.join(d, name), "w") as f:
            f.write(body)
        srcs.append(name)
    objs = " ".join(s[:-2] + ".o" for s in srcs)
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("CFLAGS = %s\nOBJS = %s\nall: $(OBJS)\n"
                ".c.o:\n\t$(CC) $(CFLAGS) -c $< -o $@\n"
                "clean:\n\trm -f $(OBJS)\n" % (" ".join(CFLAGS), objs))
    return [s[:-2] + ".o" for s in srcs]


def local_build(d, objs, cflags=CFLAGS, jobs=2):
    out = {}
    todo = list(objs)
    running = []
    while todo or running:
        while todo and len(running) < jobs:
            o = todo.pop(0)
            running.append((o, subprocess.Popen(
                ["gcc"] + cflags + ["-c", o[:-2] + ".c", "-o", o + ".ref"],
                cwd=d)))
        o, p = running.pop(0)
        if p.wait() != 0:
            raise cluster.ClusterError("local gcc failed on %s" % o)
        with open(os.path.join(d, o + ".ref"), "rb") as f:
            out[o] = f.read()
        os.unlink(os.path.join(d, o + ".ref"))
    return out


def count_objs(d, objs):
    return sum(1 for o in objs if os.path.exists(os.path.join(d, o)))


class Build:
    """make -j in the client namespace, in the background."""

    def __init__(self, c, d, env, jobs, make_args=()):
        self.d = d
        self.out = open(os.path.join(d, "make.log"), "w")
        self.p = c.popen_client(["make", "-j%d" % jobs, "-k"] +
                                list(make_args), cwd=d,
                                env=env, stdout=self.out,
                                stderr=subprocess.STDOUT)
        self.t0 = time.monotonic()

    def wait_objs(self, objs, n, timeout=120):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if count_objs(self.d, objs) >= n or self.p.poll() is not None:
                return count_objs(self.d, objs)
            time.sleep(0.02)
        return count_objs(self.d, objs)

    def finish(self, timeout=300):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.out.close()
        return rc, time.monotonic() - self.t0


class Checker:
    def __init__(self):
        self.failed = 0

    def ok(self, cond, what):
        log(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failed += 1
        return cond


def client_stats(c, env, build):
    r = c.run_client([os.path.join(build, "boltcc"), "--stats", "--json"],
                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
    if r.returncode != 0:
        raise cluster.ClusterError("boltcc --stats --json: %s" % r.stderr)
    d = json.loads(r.stdout)
    return d.get("client", d) if isinstance(d, dict) else {}


def flat_counters(d):
    """Counter name -> value, whatever nesting --stats --json uses."""
    out = {}

    def walk(x, prefix=""):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, k if not prefix else prefix + ":" + k)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            out[prefix] = x
    walk(d)
    return out


def counter(flat, name):
    return sum(v for k, v in flat.items()
               if k == name or k.endswith(":" + name) or
               k.endswith("." + name))


def run_build(c, chk, work, objs, ref, env, jobs, faults, label,
              make_args=()):
    for o in objs:
        try:
            os.unlink(os.path.join(work, o))
        except OSError:
            pass
    b = Build(c, work, env, jobs, make_args)
    for at, what, fn in faults:
        n = b.wait_objs(objs, at)
        log("%s: %d objects after %.1f s: %s" % (label, n,
                                                 time.monotonic() - b.t0,
                                                 what))
        fn()
    rc, secs = b.finish()
    log("%s: make exit %d in %.1f s" % (label, rc, secs))
    if not chk.ok(rc == 0, "%s: make succeeded" % label):
        with open(os.path.join(work, "make.log")) as f:
            sys.stdout.write(f.read()[-3000:])
    same = 0
    for o in objs:
        p = os.path.join(work, o)
        if os.path.exists(p):
            with open(p, "rb") as f:
                if f.read() == ref[o]:
                    same += 1
                else:
                    log("differs from the local build: %s" % o)
    chk.ok(same == len(objs), "%s: %d/%d objects identical to a local build"
           % (label, same, len(objs)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--scenario", default="basic", choices=["basic", "all"])
    ap.add_argument("--profile", default="10gbe")
    ap.add_argument("--files", type=int, default=24)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    why = cluster.can_run()
    if why is not None:
        log("SKIP: %s" % why)
        return cluster.SKIP
    build = os.path.abspath(a.build)
    work = os.path.abspath(a.work)
    proj = os.path.join(work, "proj")
    objs = gen_project(proj, a.files)
    log("local reference build of %d files" % len(objs))
    ref = local_build(proj, objs)
    cdir = os.path.join(work, "client")
    os.makedirs(cdir, exist_ok=True)
    chk = Checker()
    state = os.path.join(work, "cluster")
    # a 13 s job through the test compiler: longer than the heartbeat
    # timeout, so it only succeeds if the daemon's BEATs keep it alive
    fakecc = os.path.join(build, "tests", "cluster", "fakecc")
    daemon_args = []
    if os.access(fakecc, os.X_OK):
        os.environ["PATH"] = os.path.dirname(fakecc) + ":" + \
            os.environ.get("PATH", "/usr/bin:/bin")
        daemon_args = ["--allow-compiler", "fakecc"]
    else:
        log("no %s: the long-job check is left out" % fakecc)
    with cluster.Cluster(hosts=3, slots=2, profile=a.profile, build=build,
                         state=state, daemon_args=daemon_args) as c:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("DISTCC_", "BOLTCC_"))}
        env.update({
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "CC": os.path.join(build, "boltcc") + " gcc",
            "DISTCC_DIR": cdir,
            "BOLTCC_HOSTS": c.hosts_string(),
            "DISTCC_LOG": os.path.join(work, "client.log"),
            "DISTCC_VERBOSE": "1",
        })
        jobs = sum(h["slots"] for h in c.hosts)
        log("cluster %s: %s" % (c.prefix, c.hosts_string()))

        faults = [
            (3, "SIGKILL host 0's daemon", lambda: c.kill(0)),
            (6, "cut host 1's link", lambda: c.link(1, False)),
        ]
        longp = None
        if daemon_args:
            ldir = os.path.join(work, "long")
            os.makedirs(os.path.join(ldir, "client"), exist_ok=True)
            with open(os.path.join(ldir, "long.c"), "w") as f:
                f.write("int long_job(void) { return 13; }\n")
            lenv = dict(env)
            lenv.update({"DISTCC_DIR": os.path.join(ldir, "client"),
                         # plain BOLT here, the build itself is pump
                         "BOLTCC_HOSTS": "%s:%d/2,bolt,plain" % (
                             c.hosts[2]["addr"], c.port),
                         "DISTCC_FALLBACK": "0",
                         "DISTCC_LOG": os.path.join(ldir, "client.log")})
            longp = c.popen_client([os.path.join(build, "boltcc"), "fakecc",
                                    "-DFAKECC_MS=13000", "-c", "long.c",
                                    "-o", "long.o"], cwd=ldir, env=lenv)
            lt0 = time.monotonic()
        run_build(c, chk, proj, objs, ref, env, jobs, faults, "build 1")
        if longp is not None:
            lrc = longp.wait(timeout=120)
            chk.ok(lrc == 0 and os.path.exists(os.path.join(ldir, "long.o")),
                   "a 13 s remote job (no fallback) survived on heartbeats "
                   "(exit %d after %.1f s)" % (lrc, time.monotonic() - lt0))
        st = flat_counters(client_stats(c, env, build))
        log("client counters: %s" % json.dumps(
            {k: v for k, v in sorted(st.items()) if v}))
        failures = counter(st, "host_failures")
        faults_n = (counter(st, "fault_timeouts") +
                    counter(st, "fault_conn_reset") +
                    counter(st, "fault_connect"))
        chk.ok(failures >= 2, "host failures counted (%d)" % failures)
        chk.ok(faults_n >= 2, "fault counters (%d) show both faults"
               % faults_n)
        chk.ok(counter(st, "jobs_failed_no_fallback") == 0,
               "no failed job")
        chk.ok(counter(st, "jobs_remote_ok") > 0, "jobs ran remotely (%d)"
               % counter(st, "jobs_remote_ok"))

        if a.scenario == "all":
            # a fresh client state (no backoff marks from build 1) but
            # the heartbeat memory kept; other flags, so no cache hits
            cdir2 = cdir + "2"
            os.makedirs(cdir2, exist_ok=True)
            state_src = os.path.join(cdir, "state")
            if os.path.isdir(state_src):
                os.makedirs(os.path.join(cdir2, "state"), exist_ok=True)
                for f in os.listdir(state_src):
                    if f.startswith(("beat_", "probe_")):
                        shutil.copy(os.path.join(state_src, f),
                                    os.path.join(cdir2, "state"))
            env["DISTCC_DIR"] = cdir2
            c.clear(1)
            c.start(0)
            faults = [
                (2, "host 0 becomes a black hole", lambda: c.blackhole(0)),
                (4, "host 1: 30% packet drop", lambda: c.drop(1, 30)),
                (6, "host 2: +20 ms one way", lambda: c.delay(2, 20.0)),
                (9, "cut host 1's link", lambda: c.link(1, False)),
            ]
            cflags2 = ["-O1", "-g0", "-Wall"]
            ref2 = local_build(proj, objs, cflags2)
            run_build(c, chk, proj, objs, ref2, env, jobs, faults,
                      "build 2", ["CFLAGS=" + " ".join(cflags2)])
            st = flat_counters(client_stats(c, env, build))
            log("client counters: %s" % json.dumps(
                {k: v for k, v in sorted(st.items()) if v}))
            chk.ok(counter(st, "host_failures") >= 2,
                   "build 2: host failures counted")
            chk.ok(counter(st, "fault_timeouts") >= 1,
                   "build 2: the black hole / cut link timed out (%d)"
                   % counter(st, "fault_timeouts"))
            chk.ok(counter(st, "jobs_failed_no_fallback") == 0,
                   "build 2: no failed job")
        if chk.failed:
            for h in c.hosts:
                lf = os.path.join(c.state, h["name"], "boltccd.log")
                if os.path.exists(lf):
                    with open(lf, errors="replace") as f:
                        tail = f.read()[-1500:]
                    log("--- %s log tail\n%s" % (h["name"], tail))
    if chk.failed:
        log("%d check(s) failed" % chk.failed)
        return 1
    log("all checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except cluster.CannotRun as e:
        log("SKIP: %s" % e)
        sys.exit(cluster.SKIP)
