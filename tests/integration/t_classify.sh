#!/bin/sh
# t_classify.sh - `boltcc --explain COMPILER ARGS...` prints one valid JSON
# object with the right mode (local|remote) for typical command lines:
# links, -E, -M, plain -c, -S, conftest, two sources, assembler, -march=
# native, and an Xcode-style clang line with -index-store-path (which must
# be stripped from what the daemon gets).  Needs neither the files nor a
# host list.  Also boltcc's own option words (-h, an unknown --option is
# an error, the implicit cc form keeps compiler options) and a misspelt
# name in the configuration file (warned about once, the compile works).
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

# boltcc's own options: -h is --help; an unknown --option in their place
# is an error naming it (exit 101), while the implicit "boltcc ARGS" form
# (cc implied) still takes compiler options, long ones included.
"$BOLTCC" -h >"$T/h.out" 2>"$T/h.err"
rc=$?
check "-h: exit 0 (got $rc)" [ $rc -eq 0 ]
"$BOLTCC" --help >"$T/help.out" 2>&1
check "-h: the usage, as --help prints it" cmp -s "$T/h.out" "$T/help.out"
check "-h: usage on stdout, nothing on stderr" \
	sh -c "grep -q '^usage: boltcc' '$T/h.out' && test ! -s '$T/h.err'"
"$BOLTCC" --frobnicate >"$T/u.out" 2>"$T/u.err"
rc=$?
check "--frobnicate: exit 101 (got $rc)" [ $rc -eq 101 ]
check "--frobnicate: names it: $(cat "$T/u.err")" grep -qx \
	'boltcc: unknown option --frobnicate (see boltcc --help)' "$T/u.err"
check "--frobnicate: nothing on stdout, no compiler run" test ! -s "$T/u.out"
"$BOLTCC" --show-host >/dev/null 2>"$T/u2.err"
rc=$?
check "--show-host: exit 101 and the near option: $(cat "$T/u2.err")" sh -c \
	"[ $rc -eq 101 ] && grep -q 'unknown option --show-host (did you mean --show-hosts?' '$T/u2.err'"
mkdir -p "$T/impl" && cd "$T/impl" || die "no dir"
printf 'int f(void) { return __STDC_VERSION__ > 0; }\n' >x.c
# hermetic: a host list that only compiles here
for args in "-c x.c -o a.o" "-O2 -c x.c -o b.o" "--std=c99 -c x.c -o c.o" \
    "-std=c11 -DX=1 -c x.c -o d.o"; do
	o=$(echo "$args" | sed 's/.* -o //')
	# shellcheck disable=SC2086
	BOLTCC_DIR="$T/impl" BOLTCC_HOSTS=localhost "$BOLTCC" $args \
		>"$T/impl.out" 2>&1
	rc=$?
	check "implicit cc: boltcc $args: exit 0 (got $rc), $o written" \
		sh -c "[ $rc -eq 0 ] && test -s '$o'"
	[ $rc -eq 0 ] || sed 's/^/    /' "$T/impl.out" | head -n 5
done

# A misspelt name in the configuration file: one warning per run, naming
# the file, the line and the closest known name; the compile still works.
printf '# farm\nBOLTCC_HOST = 127.0.0.1:1\n' >"$T/impl/typo.cfg"
BOLTCC_CONFIG="$T/impl/typo.cfg" BOLTCC_DIR="$T/impl" \
	BOLTCC_HOSTS=localhost "$BOLTCC" cc -c x.c -o t.o >"$T/typo.out" 2>&1
rc=$?
check "config typo: the compile still succeeds (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && test -s t.o"
check "config typo: warned: $(head -n 1 "$T/typo.out")" grep -q \
	"$T/impl/typo.cfg line 2: BOLTCC_HOST: unknown setting; did you mean BOLTCC_HOSTS?" \
	"$T/typo.out"
check "config typo: said once per run" \
	[ "$(grep -c 'unknown setting' "$T/typo.out")" = 1 ]
cd "$T" || die "no dir"
finish
