#!/bin/sh
# tests/run.sh - THE test command:  sh tests/run.sh
#
# 1. makes sure the build dependencies are there (installs them with apt-get
#    when run as root, else names what is missing),
# 2. autoreconf, then two builds from scratch-able build dirs:
#      build/normal  configure --enable-werror;               make; make check
#      build/asan    configure --enable-werror --enable-asan; make check
# 3. a clang build (build/clang: every program and test program compiled
#    with clang -Werror, one test) and the macOS cross build of both
#    architectures with its checks (tests/macos/t_cross.sh, build/macos;
#    the Zig toolchain and the dependency builds are cached in
#    ~/.cache/boltcc-macos, see contrib/macos/cross-build.sh),
# 4. prints the failing tests' logs and, as the very last line,
#      N passed, N failed[, N skipped]
#    (summed over all of them; ERROR and XPASS count as failed).
# Exit status 0 only if nothing failed.
#
# Knobs: JOBS=N (default 2), BOLTCC_SKIP_ASAN=1, BOLTCC_SKIP_CLANG=1,
# BOLTCC_SKIP_MACOS=1, BOLTCC_DISTCHECK=1 (adds `make distcheck` in
# build/normal), BOLTCC_CHECK_TIMEOUT (s, per make check).

set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
JOBS=${JOBS:-2}
CHECK_TIMEOUT=${BOLTCC_CHECK_TIMEOUT:-900}
START=$(date +%s)

TOTAL_PASS=0
TOTAL_FAIL=0
TOTAL_SKIP=0

say() { printf '[%4ss] %s\n' "$(($(date +%s) - START))" "$*"; }

# Every failure is also listed again just before the last line: whoever
# reads only the end of the output still sees which checks failed.
FAILURES=$(mktemp "${TMPDIR:-/tmp}/bc-run-failures.XXXXXX") || exit 1
trap 'rm -f "$FAILURES"' EXIT

summary_and_exit() {
	if [ -s "$FAILURES" ]; then
		echo "---- what failed ----"
		head -n 60 "$FAILURES"
	fi
	_line="$TOTAL_PASS passed, $TOTAL_FAIL failed"
	[ "$TOTAL_SKIP" -gt 0 ] && _line="$_line, $TOTAL_SKIP skipped"
	echo "$_line"
	[ "$TOTAL_FAIL" -eq 0 ]
	exit $?
}

# A step that fails before tests can run counts as one failure.
step_failed() {
	say "FAILED: $1 (log: $2)"
	echo "  $1" >>"$FAILURES"
	tail -n 40 "$2" 2>/dev/null | sed 's/^/    /'
	TOTAL_FAIL=$((TOTAL_FAIL + 1))
}

. "$ROOT/tests/deps.sh"
say "checking dependencies"
if ! bc_ensure_deps; then
	TOTAL_FAIL=$((TOTAL_FAIL + 1))
	summary_and_exit
fi

say "autoreconf -fi"
mkdir -p build
if ! autoreconf -fi >build/autoreconf.log 2>&1; then
	step_failed "autoreconf" build/autoreconf.log
	summary_and_exit
fi

# count FIELD LOG: the number after "# FIELD:" in a test-suite.log
count() {
	_v=$(sed -n "s/^# $1: *\([0-9][0-9]*\).*/\1/p" "$2" | head -n 1)
	echo "${_v:-0}"
}

# report BUILDDIR NAME: add a build's results to the totals, show failures.
report() {
	_dir=$1
	_name=$2
	_log="$_dir/test-suite.log"
	if [ ! -f "$_log" ]; then
		step_failed "$_name: make check produced no test-suite.log" "$_dir/check.log"
		return
	fi
	_p=$(count PASS "$_log")
	_xf=$(count XFAIL "$_log")
	_f=$(count FAIL "$_log")
	_e=$(count ERROR "$_log")
	_xp=$(count XPASS "$_log")
	_s=$(count SKIP "$_log")
	_pass=$((_p + _xf))
	_fail=$((_f + _e + _xp))
	TOTAL_PASS=$((TOTAL_PASS + _pass))
	TOTAL_FAIL=$((TOTAL_FAIL + _fail))
	TOTAL_SKIP=$((TOTAL_SKIP + _s))
	say "$_name: $_pass passed, $_fail failed, $_s skipped"
	for _trs in $(find "$_dir/tests" -name '*.trs' 2>/dev/null | sort); do
		_res=$(sed -n 's/^:test-result: //p' "$_trs" | head -n 1)
		_t=${_trs%.trs}
		case $_res in
		FAIL|ERROR|XPASS)
			echo "---- $_name: $_res: ${_t#"$_dir"/} ----"
			# the failed checks first (integration tests print "FAIL ...",
			# check prints "...:F:..."), then the end of the log
			grep -E '^FAIL |:[FE]:|TIMEOUT|Sanitizer|runtime error' "$_t.log" |
				grep -v '^FAIL tests/' | head -n 20 >"$FAILURES.t"
			sed 's/^/  > /' "$FAILURES.t"
			{
				echo "  $_name: $_res: ${_t#"$_dir"/}"
				sed 's/^/    > /' "$FAILURES.t"
			} >>"$FAILURES"
			rm -f "$FAILURES.t"
			echo "  (last 40 lines of $_t.log)"
			tail -n 40 "$_t.log" | sed 's/^/    /'
			;;
		SKIP)
			_why=$(grep -m1 'SKIP' "$_t.log" 2>/dev/null)
			echo "    $_name: skipped ${_t#"$_dir"/}: ${_why:-no reason given}"
			;;
		esac
	done
}

# build NAME CONFIGURE-ARGS...: configure + make + make check in build/NAME
build() {
	_name=$1
	shift
	_dir="$ROOT/build/$_name"
	mkdir -p "$_dir"
	rm -f "$_dir/test-suite.log"
	say "$_name: configure $*"
	if ! (cd "$_dir" && "$ROOT/configure" "$@") >"$_dir/configure.log" 2>&1; then
		step_failed "$_name: configure" "$_dir/configure.log"
		return
	fi
	say "$_name: make -j$JOBS"
	if ! make -C "$_dir" -j"$JOBS" >"$_dir/make.log" 2>&1; then
		step_failed "$_name: make" "$_dir/make.log"
		return
	fi
	say "$_name: make -j$JOBS check"
	# each check test case has its own time limit, sized for ASan on a
	# busy 2-core machine (tests/unit/unit.h; tests bound their work by
	# counts, not by time); CK_TIMEOUT_MULTIPLIER, if set, scales them
	CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-1} timeout "$CHECK_TIMEOUT" \
		make -C "$_dir" -j"$JOBS" check >"$_dir/check.log" 2>&1
	_rc=$?
	[ $_rc -eq 124 ] && say "$_name: make check timed out after ${CHECK_TIMEOUT}s"
	report "$_dir" "$_name"
	if [ $_rc -ne 0 ] && [ ! -f "$_dir/test-suite.log" ]; then
		:	# already counted by report()
	elif [ $_rc -ne 0 ] && [ "$TOTAL_FAIL" -eq 0 ]; then
		step_failed "$_name: make check exited $_rc without a failing test" "$_dir/check.log"
	fi
}

build normal --enable-werror
if [ "${BOLTCC_DISTCHECK:-0}" = 1 ]; then
	say "normal: make distcheck"
	if ! make -C build/normal -j"$JOBS" distcheck >build/normal/distcheck.log 2>&1; then
		step_failed "normal: make distcheck" build/normal/distcheck.log
	fi
fi
if [ "${BOLTCC_SKIP_ASAN:-0}" != 1 ]; then
	build asan --enable-werror --enable-asan
fi

# compile_only NAME CONFIGURE-ARGS...: configure + make every program and
# test program (make check TESTS=, which runs none) in build/NAME; one
# test, passed if it all compiles without a warning.
compile_only() {
	_name=$1
	shift
	_dir="$ROOT/build/$_name"
	mkdir -p "$_dir"
	say "$_name: configure $* && make all check-programs"
	if (cd "$_dir" && "$ROOT/configure" "$@") >"$_dir/configure.log" 2>&1 &&
	    make -C "$_dir" -j"$JOBS" all >"$_dir/make.log" 2>&1 &&
	    make -C "$_dir" -j"$JOBS" check TESTS= >>"$_dir/make.log" 2>&1; then
		TOTAL_PASS=$((TOTAL_PASS + 1))
		say "$_name: compiled"
	else
		step_failed "$_name: build" "$_dir/make.log"
	fi
}

# clang -Wall -Wextra -Werror on Linux: the macOS compiler's warnings
# (-Wfor-loop-analysis and others gcc lacks) before the cross build
if [ "${BOLTCC_SKIP_CLANG:-0}" != 1 ] && command -v clang >/dev/null 2>&1; then
	compile_only clang --enable-werror CC=clang
fi

# macOS: cross build for both architectures (Zig, static dependencies;
# tests/macos/t_cross.sh), each check a test
if [ "${BOLTCC_SKIP_MACOS:-0}" != 1 ]; then
	say "macos: tests/macos/t_cross.sh build/macos arm64 x86_64"
	sh tests/macos/t_cross.sh build/macos >build/macos.log 2>&1
	_rc=$?
	_p=$(grep -c '^ok ' build/macos.log)
	_f=$(grep -c '^FAIL ' build/macos.log)
	[ $_rc -ne 0 ] && [ "$_f" -eq 0 ] && _f=1
	TOTAL_PASS=$((TOTAL_PASS + _p))
	TOTAL_FAIL=$((TOTAL_FAIL + _f))
	say "macos: $_p passed, $_f failed"
	grep '^FAIL ' build/macos.log | sed 's/^/  macos: /' >>"$FAILURES"
	grep -E '^(ok   [a-z0-9_]+: cross-build|FAIL|    )' build/macos.log | sed 's/^/  /'
fi

say "done in $(($(date +%s) - START))s"
summary_and_exit
