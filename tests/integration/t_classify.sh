#!/bin/sh
# t_classify.sh - `boltcc --explain COMPILER ARGS...` prints one valid JSON
# object with the right mode (local|remote) for typical command lines:
# links, -E, -M, plain -c, -S, conftest, two sources, assembler, -march=
# native, and an Xcode-style clang line with -index-store-path (which must
# be stripped from what the daemon gets).  Needs neither the files nor a
# host list.
. "$(dirname "$0")/lib.sh"
need_binaries

$PYTHON - "$BOLTCC" >"$T/out.txt" 2>&1 <<'EOF'
import json, subprocess, sys, os
boltcc = sys.argv[1]
env = dict(os.environ)
env.pop("BOLTCC_HOSTS", None)
env.pop("DISTCC_HOSTS", None)

# (expected mode, argv, [words that must NOT be in remote_argv],
#  [words that must be in remote_argv], [words that must be in cpp_argv])
xcode = ["clang", "-x", "objective-c", "-target", "arm64-apple-macos13.0",
         "-fmessage-length=0", "-fobjc-arc", "-O0", "-DDEBUG=1",
         "-isysroot", "/Applications/Xcode.app/SDKs/MacOSX.sdk",
         "-index-store-path", "/tmp/DerivedData/Index.noindex/DataStore",
         "-iquote", "/tmp/build/App-project-headers.hmap",
         "-I/tmp/build/include", "-MMD", "-MT", "dependencies",
         "-MF", "/tmp/build/x.d", "--serialize-diagnostics", "/tmp/build/x.dia",
         "-c", "/tmp/src/x.m", "-o", "/tmp/build/x.o",
         "-index-unit-output-path", "/App.build/x.o"]
cases = [
    ("remote", ["gcc", "-c", "x.c", "-o", "x.o"], [], ["-c", "x.c"], []),
    ("remote", ["gcc", "-O2", "-DFOO=1", "-I", "inc", "-MD", "-MF", "x.d",
                "-c", "x.c", "-o", "obj/x.o"],
     ["-DFOO=1", "-MD", "inc"], ["-O2", "-c"], ["-DFOO=1"]),
    # distcc 3.4 distributes -S; xcode.md 1.2 makes it local: either is fine
    ("any", ["gcc", "-S", "x.c"], [], [], []),
    ("remote", ["clang", "-c", "x.c"], [], ["-c"], []),
    ("remote", ["gcc", "-c", "x.i", "-o", "x.o"], [], [], []),
    ("remote", xcode, ["-index-store-path", "-index-unit-output-path",
                       "/tmp/DerivedData/Index.noindex/DataStore"], ["-c"], []),
    ("local", ["gcc", "-o", "prog", "a.o", "b.o"], [], [], []),
    ("local", ["gcc", "x.c", "-o", "prog"], [], [], []),
    ("local", ["gcc", "-E", "x.c"], [], [], []),
    ("local", ["gcc", "-M", "x.c"], [], [], []),
    ("local", ["gcc", "-MM", "-c", "x.c"], [], [], []),
    ("local", ["gcc", "-c", "conftest.c", "-o", "conftest.o"], [], [], []),
    ("local", ["gcc", "-c", "a.c", "b.c"], [], [], []),
    ("local", ["gcc", "-c", "x.s", "-o", "x.o"], [], [], []),
    ("local", ["gcc", "-march=native", "-c", "x.c"], [], [], []),
    ("local", ["gcc", "-c", "x.c", "-o", "-"], [], [], []),
    ("local", ["gcc", "--coverage", "-c", "x.c"], [], [], []),
    ("local", ["clang", "-x", "objective-c-header", "-c", "p.pch", "-o", "p.pch.gch"], [], [], []),
    ("local", ["clang", "--analyze", "x.c", "-o", "x.plist"], [], [], []),
    ("local", ["clang", "-cc1", "-emit-obj", "x.c"], [], [], []),
]
bad = 0
for mode, argv, absent, present, cpp in cases:
    label = " ".join(argv) if len(argv) < 12 else "xcode-style " + " ".join(argv[:3]) + " ..."
    p = subprocess.run([boltcc, "--explain"] + argv, capture_output=True,
                       env=env, timeout=30)
    out = p.stdout.decode("utf-8", "replace").strip()
    try:
        j = json.loads(out)
    except ValueError as e:
        print("FAIL --explain %s: not JSON (exit %d): %r %s" % (
            label, p.returncode, out[:200], p.stderr[:200]))
        bad += 1
        continue
    problems = []
    if p.returncode != 0:
        problems.append("exit %d" % p.returncode)
    if mode == "any":
        if j.get("mode") not in ("local", "remote"):
            problems.append("mode %r" % j.get("mode"))
    elif j.get("mode") != mode:
        problems.append("mode %r, expected %r (reason %r)" % (j.get("mode"), mode, j.get("reason")))
    if not j.get("reason"):
        problems.append("no reason")
    if mode == "remote":
        ra = j.get("remote_argv")
        if not isinstance(ra, list):
            problems.append("remote_argv missing")
        else:
            for w in absent:
                if w in ra:
                    problems.append("remote_argv still has %s" % w)
            for w in present:
                if w not in ra:
                    problems.append("remote_argv lacks %s" % w)
        ca = j.get("cpp_argv")
        if not isinstance(ca, list):
            problems.append("cpp_argv missing")
        else:
            if "-E" not in ca and not j.get("preprocessed"):
                problems.append("cpp_argv has no -E")
            for w in cpp:
                if w not in ca:
                    problems.append("cpp_argv lacks %s" % w)
    if problems:
        bad += 1
        print("FAIL --explain %s: %s" % (label, "; ".join(problems)))
        print("     json: %s" % out[:400])
    else:
        print("ok   --explain %s -> %s (%s)" % (label, j.get("mode"), j.get("reason")))
print("RESULT %d %d" % (len(cases), bad))
EOF
cat "$T/out.txt"
res=$(sed -n 's/^RESULT //p' "$T/out.txt")
[ -n "$res" ] || die "the checker did not finish"
n=${res% *}
bad=${res#* }
_CHECKS=$n
_FAILED=$bad
finish
