#!/bin/sh
# t_xcode.sh - Xcode integration (contrib/xcode/README.md, xcode.md 7):
#  * every corpus invocation through `boltcc --explain` (xcode_explain.py);
#  * the discovery probe, -cc1 jobs, --analyze, -fsyntax-only and ProcessPCH
#    reach the compiler with their argv byte for byte, in launcher mode;
#  * CC=boltcc: the clang of DEVELOPER_DIR's Xcode (a fake tree) is run;
#  * the configuration file (~/.config/boltcc/config, BOLTCC_CONFIG);
#  * end to end with Debian's clang as a cross compiler: Objective-C and C
#    sources with #import through header maps, for arm64-apple-macos11 and
#    arm64-apple-ios14.0-simulator, plain and pump mode, with .d and .dia:
#    Mach-O objects identical to a local compile, .d identical, .dia there;
#    a compile error still leaves the .dia and the exit status; a
#    precompiled prefix header (only X.pch.gch beside -include X.pch);
#  * boltccd's stats name its compilers; socket activation (LISTEN_FDS).
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool clang
HMAP="$SPEC/xcode-tools/hmap.py"
CORPUS="$SPEC/xcode-invocations.txt"
[ -f "$HMAP" ] || die "no $HMAP (tests/data: the spec's header-map writer)"

# --- the corpus through --explain -------------------------------------
if [ -f "$CORPUS" ]; then
	mkdir -p "$T/explain"
	if $PYTHON "$HERE/xcode_explain.py" "$BOLTCC" "$CORPUS" "$T/explain" \
	    >"$T/explain.out" 2>&1; then
		pass "corpus: $(tail -n 1 "$T/explain.out")"
	else
		fail "corpus through --explain:"
		sed 's/^/    /' "$T/explain.out" | head -n 30
	fi
else
	note "no $CORPUS: corpus check skipped"
fi

# explain_reason ARGS...: the "mode/reason" of a plan
explain_reason() {
	"$BOLTCC" --explain "$@" | $PYTHON -c \
	    'import json,sys; p=json.load(sys.stdin); print(p["mode"]+"/"+p["reason"])'
}
check "probe is local" test "$(explain_reason clang -v -E -dM -x objective-c \
	-c /dev/null)" = "local/-E"
check "-cc1 is local" test "$(explain_reason /x/clang -cc1 -triple \
	arm64-apple-macosx11 -emit-obj -o a.o a.m | cut -d/ -f1)" = local
check "--analyze is local" test "$(explain_reason clang --analyze -x \
	objective-c -c a.m -o a.plist)" = "local/--analyze"
check "-fsyntax-only is local" test "$(explain_reason clang -fsyntax-only \
	-c a.m)" = "local/-fsyntax-only"

# --- a fake Xcode: its clang records argv, then runs the real one ------
REALCLANG=$(command -v clang)
DEV="$T/Xcode_99.app/Contents/Developer"
TC="$DEV/Toolchains/XcodeDefault.xctoolchain/usr/bin"
mkdir -p "$TC"
cat >"$TC/clang" <<X
#!/bin/sh
for a in "\$0" "\$@"; do printf '%s\n' "\$a"; done >"$T/argv.\$\$"
mv "$T/argv.\$\$" "$T/argv.last"
exec "$REALCLANG" "\$@"
X
chmod 755 "$TC/clang"
# argv_is WORDS...: the fake clang got exactly these arguments
argv_is() {
	printf '%s\n' "$@" >"$T/argv.want"
	tail -n +2 "$T/argv.last" | cmp -s - "$T/argv.want"
}
cd "$T" || die "no T"
printf 'int probe;\n' >p.c
# launcher mode: argv[1] is the real compiler, used exactly
rm -f argv.last
"$BOLTCC" "$TC/clang" -v -E -dM -x c -c /dev/null >probe.out 2>probe.err
check "probe: exit 0, defines printed" grep -q __clang_version__ probe.out
check "probe: argv byte for byte" argv_is -v -E -dM -x c -c /dev/null
"$BOLTCC" "$TC/clang" -cc1 -triple x86_64-unknown-linux-gnu -emit-obj \
	-o cc1.o p.c >/dev/null 2>&1
check "-cc1: argv byte for byte" argv_is -cc1 -triple \
	x86_64-unknown-linux-gnu -emit-obj -o cc1.o p.c
check "-cc1: object written" test -s cc1.o
"$BOLTCC" "$TC/clang" -x c-header -c p.c -o p.pch.gch >/dev/null 2>&1
check "ProcessPCH: argv byte for byte" argv_is -x c-header -c p.c -o p.pch.gch
# CC=boltcc (implicit): the Xcode of DEVELOPER_DIR, not PATH's clang
rm -f argv.last
DEVELOPER_DIR="$T/Xcode_99.app" "$BOLTCC" -c p.c -o cc.o 2>cc.err
check "CC=boltcc: DEVELOPER_DIR's clang ran" test -s argv.last
check "CC=boltcc: object" test -s cc.o
rm -f argv.last
BOLTCC_CONFIG="$T/nocfg" DEVELOPER_DIR="$T/Xcode_99.app" "$BOLTCC" clang \
	-isysroot "$DEV/Platforms/MacOSX.platform/Developer/SDKs/MacOSX.sdk" \
	-fsyntax-only p.c 2>/dev/null
check "masquerade name clang: DEVELOPER_DIR's clang ran" test -s argv.last
rm -f argv.last
env -u DEVELOPER_DIR "$BOLTCC" clang -isysroot \
	"$DEV/Platforms/MacOSX.platform/Developer/SDKs/MacOSX.sdk" \
	-fsyntax-only p.c 2>/dev/null
check "no DEVELOPER_DIR: the -isysroot's Xcode clang ran" test -s argv.last

# --- the configuration file ---------------------------------------------
mkdir -p "$T/home/.config/boltcc" "$T/cstate"
cat >"$T/home/.config/boltcc/config" <<X
# farm
BOLTCC_HOSTS = 127.0.0.1:1/3,bolt
export BOLTCC_DIR='$T/cstate'
X
HOME="$T/home" "$BOLTCC" --show-hosts >hosts.out 2>&1
check "config file: host list read" grep -q '127.0.0.1' hosts.out
HOME="$T/home" BOLTCC_HOSTS="127.0.0.9/2" "$BOLTCC" --show-hosts >hosts2.out 2>&1
check "config file: the environment wins" grep -q '127.0.0.9' hosts2.out
check "config file: ... and replaces the file's list" \
	sh -c "! grep -q '127.0.0.1' hosts2.out"

# --- end to end: cross-compiled Objective-C and C through the farm ------
start_boltccd || die "cannot start boltccd"
P="$T/proj"
mkdir -p "$P/Sources" "$P/Headers/MyLib" "$P/build" "$P/pchsrc" "$P/pch"
cat >"$P/Headers/Foo.h" <<'X'
#ifndef FOO_H
#define FOO_H
__attribute__((objc_root_class))
@interface Foo { int x; }
- (int)value;
@end
#define FOO_K 42
#endif
X
echo 'static inline int bar(int v) { return v * 3; }' >"$P/Headers/MyLib/Bar.h"
echo '#define F2 7' >"$P/Headers/Foo2.h"
cat >"$P/Sources/foo.m" <<'X'
#import "Foo.h"
#import <MyLib/Bar.h>
#import "Foo.h"
@implementation Foo
- (int)value { return bar(x) + FOO_K; }
@end
X
cat >"$P/Sources/plain.c" <<'X'
#import "Foo2.h"
#import <MyLib/Bar.h>
int plain(int a) { int unused; if (a = 2) return 1; return bar(a) + F2; }
X
echo 'int broken(void) { return undefined_thing; }' >"$P/Sources/bad.c"
cd "$P" || die "no proj"
# Xcode's maps: quoted names, framework-style names, a relative redirect
$PYTHON "$HMAP" write build/project-headers.hmap \
	"Foo.h=$P/Headers/Foo.h" "Foo2.h=$P/Headers/Foo2.h" >/dev/null
$PYTHON "$HMAP" write build/all-target-headers.hmap \
	"MyLib/Bar.h=$P/Headers/MyLib/Bar.h" "Bar.h=MyLib/Bar.h" >/dev/null
HM="-iquote build/project-headers.hmap -I build/all-target-headers.hmap"
HM2="-iquote build/project-headers.hmap -I build/project-headers.hmap -I build/all-target-headers.hmap"
BOLTCC_DIR="$T/c1"
DISTCC_FALLBACK=0
export BOLTCC_DIR DISTCC_FALLBACK
mkdir -p "$BOLTCC_DIR"

macho() { [ "$(od -An -tx1 -N4 "$1" | tr -d ' ')" = cffaedfe ]; }
# cstat KEY: client counter (0 when absent)
cstat() {
	"$BOLTCC" --stats --json >"$T/cs.json" 2>/dev/null
	_v=$(json_get "$T/cs.json" "$1")
	case $_v in ''|*[!0-9]*) echo 0 ;; *) echo "$_v" ;; esac
}
# farm: jobs answered by the farm (compiled there or from its cache)
farm() { echo $(( $(cstat jobs_remote_ok) + $(cstat cache_hits) )); }
same_d() { sed '1s/^[^:]*:/T:/' "$1" | cmp -s - "$2"; }
# deps FILE: the files a .d names, one a line, sorted
deps() { tr ' \\' '\n\n' <"$1" | grep -v -e '^$' -e ':$' | sort; }
same_deps() { [ "$(deps "$1")" = "$(deps "$2")" ]; }

n=0
for mode in plain pump; do
	# plain mode: -gno-column-info, else the debug info of a .i would
	# differ and the job compiles locally (doc/fidelity.md)
	case $mode in
	plain) BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt,plain"; dbg=-gno-column-info ;;
	pump) BOLTCC_HOSTS="127.0.0.1:$DPORT,cpp,lzo,bolt"; dbg= ;;
	esac
	export BOLTCC_HOSTS
	for target in arm64-apple-macos11 arm64-apple-ios14.0-simulator; do
		for src in foo.m plain.c; do
			case $src in
			*.m) lang=objective-c ;;
			*) lang=c ;;
			esac
			n=$((n + 1))
			for maps in "$HM" "$HM2"; do
			# shellcheck disable=SC2086
			set -- -x $lang -target $target -fmessage-length=0 \
				$maps -g $dbg -Wall -MMD -MT dependencies
			rm -f build/l.* build/r.*
			clang "$@" -MF build/l.d --serialize-diagnostics \
				build/l.dia -c "Sources/$src" -o build/l.o
			# pump mode returns the .dia too, its paths the client's
			before=$(farm)
			"$BOLTCC" clang "$@" -MF build/r.d \
				--serialize-diagnostics build/r.dia \
				-c "Sources/$src" -o build/r.o 2>"$T/err.txt"
			rc=$?
			after=$(farm)
			label="$mode $target $src ($(echo "$maps" | wc -w) map args)"
			check "$label: exit 0" test $rc = 0
			check "$label: compiled remotely" \
				test "$after" -gt "$before"
			check "$label: Mach-O, identical to local" \
				sh -c "od -An -tx1 -N4 build/r.o | tr -d ' ' | grep -q cffaedfe && cmp -s build/l.o build/r.o"
			sed '1s/^[^:]*:/T:/' build/l.d >build/l.d.norm
			check "$label: .d identical" same_d build/r.d build/l.d.norm
			check "$label: .dia present" sh -c \
				"[ \"\$(head -c 4 build/r.dia)\" = DIAG ]"
			[ $src = plain.c ] &&
				check "$label: the .dia holds the warnings" \
					grep -q unused build/r.dia
			# pump: byte for byte; plain: the same diagnostics, but
			# their file offsets are the .i's (doc/fidelity.md)
			if [ $mode = pump ]; then
				check "$label: .dia identical to local" \
					cmp -s build/l.dia build/r.dia
			elif command -v c-index-test >/dev/null 2>&1; then
				check "$label: .dia: the same diagnostics as local" \
					sh -c "c-index-test -read-diagnostics build/l.dia >build/l.dtxt 2>&1;
					c-index-test -read-diagnostics build/r.dia >build/r.dtxt 2>&1;
					cmp -s build/l.dtxt build/r.dtxt"
			fi
			done
		done
	done
	# without --serialize-diagnostics the job really is a pump job
	if [ $mode = pump ]; then
		before=$(cstat jobs_pump)
		# shellcheck disable=SC2086
		set -- -x objective-c -target arm64-apple-macos11 $HM2 \
			-MMD -MT dependencies
		clang "$@" -MF build/l.d -c Sources/foo.m -o build/l.o
		"$BOLTCC" clang "$@" -MF build/r.d -c Sources/foo.m \
			-o build/r.o 2>"$T/err.txt"
		check "pump: header maps scanned, job sent in pump mode" \
			test "$(cstat jobs_pump)" -gt "$before"
		check "pump: object identical" cmp -s build/l.o build/r.o
		check "pump: .d names the same files" same_deps build/r.d \
			build/l.d
		# wrapped as clang would have after the root is stripped
		# (common/deps.c): byte for byte
		sed '1s/^[^:]*:/T:/' build/l.d >build/l.d.norm
		check "pump: .d byte-identical" same_d build/r.d build/l.d.norm
	fi
done
unset BOLTCC_HOSTS

# a compile error: the .dia is still written, the status is the compiler's
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
export BOLTCC_HOSTS
# shellcheck disable=SC2086
set -- -x c -target arm64-apple-macos11 $HM -MMD -MT dependencies
clang "$@" -MF build/lb.d --serialize-diagnostics build/lb.dia \
	-c Sources/bad.c -o build/lb.o 2>/dev/null
lrc=$?
for retry in yes no; do
	rm -f build/rb.*
	if [ $retry = no ]; then
		DISTCC_SKIP_LOCAL_RETRY=1 "$BOLTCC" clang "$@" -MF build/rb.d \
			--serialize-diagnostics build/rb.dia -c Sources/bad.c \
			-o build/rb.o 2>"$T/err.txt"
	else
		"$BOLTCC" clang "$@" -MF build/rb.d --serialize-diagnostics \
			build/rb.dia -c Sources/bad.c -o build/rb.o 2>"$T/err.txt"
	fi
	rc=$?
	check "error (local retry $retry): exit $lrc like clang" test $rc = $lrc
	check "error (local retry $retry): .dia written" sh -c \
		"[ \"\$(head -c 4 build/rb.dia)\" = DIAG ]"
	check "error (local retry $retry): no object" test ! -e build/rb.o
	check "error (local retry $retry): error shown" \
		grep -q undefined_thing "$T/err.txt"
done

# a precompiled prefix header: -include pch/Prefix.pch, only the .gch there
printf '#define PREFIX_K 9\nstatic inline int pfx(int a) { return a * PREFIX_K; }\n' \
	>pchsrc/Prefix.pch
clang -x objective-c-header -target arm64-apple-macos11 -c pchsrc/Prefix.pch \
	-o pch/Prefix.pch.gch
echo 'int usepfx(void) { return pfx(2); }' >Sources/usepfx.m
set -- -x objective-c -target arm64-apple-macos11 -include pch/Prefix.pch \
	-MMD -MT dependencies
clang "$@" -MF build/lp.d --serialize-diagnostics build/lp.dia \
	-c Sources/usepfx.m -o build/lp.o
before=$(farm)
"$BOLTCC" clang "$@" -MF build/rp.d --serialize-diagnostics build/rp.dia \
	-c Sources/usepfx.m -o build/rp.o 2>"$T/err.txt"
check "prefix PCH: remote" test "$(farm)" -gt "$before"
check "prefix PCH: object identical" cmp -s build/lp.o build/rp.o
# the same files, in another order (clang lists the PCH's header first
# when it compiles against the .gch; -E reads it as an -include)
check "prefix PCH: .d names the same files" same_deps build/lp.d build/rp.d
check "prefix PCH: .dia present" test -s build/rp.dia
unset BOLTCC_HOSTS

# --- the daemon names its compilers ------------------------------------
$DCC http "$DSPORT" /stats.json 2>/dev/null | sed '1,/^\r*$/d' >"$T/stats.json"
check "stats.json: compilers with clang's version" $PYTHON -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any("clang version" in c["version"] for c in d["compilers"]), d.get("compilers")
assert "xcode" in d' "$T/stats.json"
$DCC http "$DSPORT" /metrics >"$T/metrics.txt" 2>/dev/null
check "/metrics: boltccd_compiler_info" grep -q '^boltccd_compiler_info{name="clang"' \
	"$T/metrics.txt"

# --- socket activation (systemd protocol) -------------------------------
set -- $($DCC freeport --pair)
APORT=$1; ASPORT=$2
ALOG="$T/activated.log"
if command -v systemd-socket-activate >/dev/null 2>&1; then
	systemd-socket-activate -l "127.0.0.1:$APORT" -l "127.0.0.1:$ASPORT" \
		--fdname=jobs:stats "$BOLTCCD" --no-detach --port 1 \
		--stats-port "$ASPORT" --log-file "$ALOG" --log-level debug \
		--no-cache >"$ALOG.out" 2>&1 &
else
	$PYTHON - "$APORT" "$ASPORT" "$BOLTCCD" "$ALOG" >"$ALOG.out" 2>&1 <<'X' &
import os, socket, sys
port, sport, boltccd, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
fds = []
for p in (port, sport):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", p)); s.listen(16); fds.append(s.detach())
for i, fd in enumerate(fds):
    os.dup2(fd, 3 + i)
env = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS="2",
           LISTEN_FDNAMES="jobs:stats")
os.execve(boltccd, [boltccd, "--no-detach", "--port", "1", "--stats-port",
          str(sport), "--log-file", log, "--log-level", "debug", "--no-cache"], env)
X
fi
_PIDS="$_PIDS $!"
# the manager accepts nothing itself: the daemon starts on the first
# connection (systemd-socket-activate) or at once (the wrapper)
if $DCC wait-http "$ASPORT" 15; then
	pass "activated: stats served on the inherited socket"
	echo 'int act(void) { return 3; }' >act.c
	clang -c act.c -o act.l.o
	BOLTCC_HOSTS="127.0.0.1:$APORT,bolt" "$BOLTCC" clang -c act.c -o act.r.o \
		2>"$T/err.txt"
	check "activated: job compiled over the inherited socket" cmp -s act.l.o act.r.o
	check "activated: log names the handed-over sockets" \
		grep -q 'socket from the service manager' "$ALOG"
	check "activated: nothing bound on --port 1" \
		sh -c "! grep -q 'listening on' '$ALOG'"
else
	fail "activated boltccd did not serve its stats socket"
	tail -n 20 "$ALOG" "$ALOG.out" 2>/dev/null
fi
finish
