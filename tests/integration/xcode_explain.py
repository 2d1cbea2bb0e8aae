#!/usr/bin/env python3
"""Every invocation of spec/xcode-invocations.txt through `boltcc --explain`.

usage: xcode_explain.py BOLTCC CORPUS TMPDIR

Each block's command line (its @…-common-args.resp written from the
block's "# resp-content:" when the log printed it) must give the right
decision: ProcessPCH and coverage lines local with their reason, every
other CompileC line remote, with a remote argv that holds no Xcode-only
or preprocessor-only flag and a local preprocessor argv that keeps the
.d flags.  Needs neither Xcode nor the files.
"""
import json, os, shlex, subprocess, sys

BANNED_EXACT = {"-index-store-path", "-index-unit-output-path",
                "-ivfsstatcache", "-ivfsoverlay", "-iquote", "-include",
                "--serialize-diagnostics", "-MF", "-MT", "-MMD", "-MD",
                "-iframework", "-fmodules", "-gmodules", "-isystem"}
BANNED_PREFIX = ("-I", "-F", "-D", "@", "-fmodules-cache-path=",
                 "-fbuild-session-file=", "-fmodule-map-file=", "-fmodules-",
                 "-index-", "-ivfs")
VALUE_OPTS = {"-o", "-isysroot", "-Xanalyzer", "-c", "-target", "-arch", "-x"}


def blocks(text):
    b = {}
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("# ["):
            b = {"num": int(line[3:].split("]")[0])}
        elif line.startswith("# step: "):
            b["step"] = line[8:].split(" ")[0]
        elif line.startswith("# resp-file: "):
            b["resp_file"] = line[13:]
        elif line.startswith("# resp-content: "):
            if not line[16:].startswith("("):
                b["resp_content"] = line[16:]
        elif not line.startswith("#") and "num" in b:
            b["line"] = line
            yield b
            b = {}


def main():
    boltcc, corpus, tmp = sys.argv[1:4]
    failures = 0
    counts = {"remote": 0, "local": 0}
    for b in blocks(open(corpus).read()):
        argv = shlex.split(b["line"])
        if "resp_file" in b:
            path = os.path.join(tmp, "block%d.resp" % b["num"])
            with open(path, "w") as f:
                f.write(b.get("resp_content", ""))
            argv = ["@" + path if a == "@" + b["resp_file"] else a
                    for a in argv]
        r = subprocess.run([boltcc, "--explain"] + argv, capture_output=True,
                           text=True, env=dict(os.environ, BOLTCC_HOSTS=""))
        try:
            plan = json.loads(r.stdout)
        except ValueError:
            print("FAIL block %d: no JSON (%s)" % (b["num"], r.stderr.strip()))
            failures += 1
            continue
        # gcc-style coverage stays local; clang's source-based coverage
        # goes out in BOLT pump mode only ("pump_only": "coverage")
        cov = any(a in ("-fprofile-arcs", "-ftest-coverage") for a in argv)
        srccov = not cov and b["step"] != "ProcessPCH" and any(
            a.startswith("-fprofile-instr-generate") for a in argv)
        want = ("local", "precompiled header") if b["step"] == "ProcessPCH" \
            else ("local", "coverage") if cov else ("remote", None)
        errs = []
        if srccov and plan.get("pump_only") != "coverage":
            errs.append("pump_only %r, want 'coverage'" % plan.get("pump_only"))
        if plan.get("mode") != want[0]:
            errs.append("mode %s (%s), want %s" % (plan.get("mode"),
                        plan.get("reason"), want[0]))
        elif want[1] is not None and plan.get("reason") != want[1]:
            errs.append("reason %r, want %r" % (plan.get("reason"), want[1]))
        if plan.get("mode") == "remote":
            ra = plan["remote_argv"]
            for i, a in enumerate(ra):
                if i > 0 and ra[i - 1] in VALUE_OPTS:
                    continue
                if a in BANNED_EXACT or (i > 0 and a.startswith(BANNED_PREFIX)):
                    errs.append("remote_argv has %s" % a)
            xi = ra.index("-x") if "-x" in ra else -1
            if xi < 0 or not ra[xi + 1].endswith("cpp-output"):
                errs.append("remote -x is not a cpp-output language")
            ca = plan["cpp_argv"]
            if "-MMD" not in ca or "dependencies" not in ca or "-E" not in ca:
                errs.append("cpp_argv lost -MMD -MT dependencies or -E")
            for a in ca:
                if a in ("-c", "-o", "--serialize-diagnostics",
                         "-index-store-path", "-ivfsstatcache") or \
                        a.startswith("@"):
                    errs.append("cpp_argv has %s" % a)
            if not plan.get("dia_file") or not plan.get("dep_file"):
                errs.append("no dia_file/dep_file")
        if errs:
            failures += 1
            print("FAIL block %d: %s" % (b["num"], "; ".join(errs)))
        else:
            counts[want[0]] += 1
    print("corpus: %d remote, %d local, %d failures" %
          (counts["remote"], counts["local"], failures))
    sys.exit(1 if failures or counts["remote"] < 20 else 0)


main()
