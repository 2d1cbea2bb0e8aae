# lib.sh - shared helpers for boltcc's integration tests (sourced, POSIX sh).
#
# Every test: `. "$(dirname "$0")/lib.sh"`, then calls helpers below.
# Exit status: 0 pass, 1 fail, 77 skip (automake convention).
# Environment from Makefile.am: BOLTCC_BUILDDIR, BOLTCC_SRCDIR.  When a test
# is run by hand they default to the current directory / the source tree.
# BOLTCC_KEEP=1 keeps the temp dir for inspection.

set -u

TEST_NAME=$(basename "$0" .sh)
_here=$(cd "$(dirname "$0")" && pwd)
: "${BOLTCC_SRCDIR:=$(cd "$_here/../.." && pwd)}"
: "${BOLTCC_BUILDDIR:=$(pwd)}"
HERE="$BOLTCC_SRCDIR/tests/integration"
BOLTCC="$BOLTCC_BUILDDIR/boltcc"
BOLTCCD="$BOLTCC_BUILDDIR/boltccd"
PYTHON=${PYTHON:-python3}
DCC="$PYTHON $HERE/dcc.py"
# the spec data the tests use, kept in the repository (tests/data/README.md)
SPEC="$BOLTCC_SRCDIR/tests/data/spec"
VECTORS="$SPEC/vectors"

# Keep the environment of the caller from steering the client.
unset DISTCC_HOSTS BOLTCC_HOSTS DISTCC_DIR BOLTCC_DIR DISTCC_FALLBACK \
      DISTCC_SKIP_LOCAL_RETRY DISTCC_BACKOFF_PERIOD DISTCC_IO_TIMEOUT \
      DISTCC_VERBOSE DISTCC_LOG DISTCC_SAVE_TEMPS _DISTCC_SAFEGUARD \
      CCACHE_PREFIX 2>/dev/null || true
LC_ALL=C
# helpers import dcc.py from the source tree: no __pycache__ there
PYTHONDONTWRITEBYTECODE=1
export LC_ALL PYTHONDONTWRITEBYTECODE
T=$(mktemp -d "${TMPDIR:-/tmp}/bc-$TEST_NAME.XXXXXX") || exit 99
# Every temp file of the programs under test (daemon job dirs, client temp
# files), including those a SIGKILLed daemon leaves behind, stays in $T.
# 1777 like /tmp: distccd runs as its own user.
mkdir "$T/tmp" && chmod 1777 "$T/tmp" && chmod 755 "$T" || exit 99
TMPDIR="$T/tmp"
export TMPDIR

# Sanitizer builds (--enable-asan): every report of every boltcc/boltccd
# process goes to $T/sanitizer.<pid>; finish() fails the test if any
# appeared, even when the farm hid the crash by falling back.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/sanitizer"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:log_path=$T/sanitizer"
export ASAN_OPTIONS UBSAN_OPTIONS
_PIDS=""
_FAILED=0
_CHECKS=0
_WD=""

log() { printf '%s: %s\n' "$TEST_NAME" "$*"; }
note() { printf '  .. %s\n' "$*"; }

_cleanup() {
	_rc=$?
	for _p in $_PIDS; do
		kill -TERM "$_p" 2>/dev/null || true
	done
	for _p in $_PIDS; do
		_i=0
		while kill -0 "$_p" 2>/dev/null && [ $_i -lt 30 ]; do
			sleep 0.1; _i=$((_i + 1))
		done
		kill -KILL "$_p" 2>/dev/null || true
	done
	if [ -n "$_WD" ]; then
		kill "$(cat "$T/.wd" 2>/dev/null || echo 0)" 2>/dev/null || true
	fi
	if [ "${BOLTCC_KEEP:-0}" = 1 ]; then
		log "kept $T"
	else
		rm -rf "$T"
	fi
	exit $_rc
}
trap _cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

# Watchdog: a hung test must not hang `make check`.
watchdog() {
	( sleep "$1" & echo $! >"$T/.wd"; wait $! && {
		echo "$TEST_NAME: TIMEOUT after $1 s, killing" >&2
		for _p in $_PIDS; do kill -KILL "$_p" 2>/dev/null; done
		kill -TERM $$ 2>/dev/null; } ) >/dev/null 2>&1 &
	_WD=$!
}
watchdog "${BOLTCC_TEST_TIMEOUT:-240}"

skip() { log "SKIP: $*"; exit 77; }
die() { log "FAIL: $*"; exit 1; }

# check DESCRIPTION COMMAND...: run a check, record failure, keep going.
check() {
	_d=$1; shift
	_CHECKS=$((_CHECKS + 1))
	if "$@"; then
		printf 'ok   %s\n' "$_d"
	else
		printf 'FAIL %s\n' "$_d"
		_FAILED=$((_FAILED + 1))
	fi
}
fail() {
	printf 'FAIL %s\n' "$*"
	_CHECKS=$((_CHECKS + 1))
	_FAILED=$((_FAILED + 1))
}
pass() {
	printf 'ok   %s\n' "$*"
	_CHECKS=$((_CHECKS + 1))
}
finish() {
	for _s in "$T"/sanitizer.*; do
		[ -f "$_s" ] || continue
		fail "sanitizer report from pid ${_s##*.}:"
		head -n 40 "$_s" | sed 's/^/    /'
	done
	if [ $_FAILED -ne 0 ]; then
		for _l in "$T"/*.log; do
			[ -f "$_l" ] || continue
			echo "---- last lines of $(basename "$_l") ----"
			tail -n 25 "$_l"
		done
		log "$_FAILED of $_CHECKS checks failed (BOLTCC_KEEP=1 keeps $T)"
		exit 1
	fi
	log "all $_CHECKS checks passed"
	exit 0
}

need_binaries() {
	[ -x "$BOLTCC" ] || die "$BOLTCC not built"
	[ -x "$BOLTCCD" ] || die "$BOLTCCD not built"
}
need_tool() {
	for _t in "$@"; do
		command -v "$_t" >/dev/null 2>&1 || skip "$_t is not installed"
	done
}

freeports() { $DCC freeport "${1:-1}"; }

# start_boltccd [extra args...]: start a daemon on 127.0.0.1 with a stats
# port, wait until it answers.  Sets DPORT DSPORT DLOG DPID.
start_boltccd() {
	set -- $($DCC freeport --pair) "$@"
	DPORT=$1; DSPORT=$2; shift 2
	DLOG="$T/boltccd-$DPORT.log"
	"$BOLTCCD" --no-detach --listen 127.0.0.1 --port "$DPORT" \
		--stats-port "$DSPORT" --log-file "$DLOG" --log-level debug \
		--cache-dir "$T/cache-$DPORT" --jobs 2 "$@" >"$DLOG.out" 2>&1 &
	DPID=$!
	_PIDS="$_PIDS $DPID"
	if ! $DCC wait-http "$DSPORT" 15; then
		log "boltccd did not come up (args: $*)"
		tail -n 20 "$DLOG" "$DLOG.out" 2>/dev/null
		return 1
	fi
	return 0
}

# start_distccd: Debian's distccd on a free port, verbose log.  Sets
# SPORT SSPORT SLOG SPID.
start_distccd() {
	set -- $(freeports 2) "$@"
	SPORT=$1; SSPORT=$2; shift 2
	SLOG="$T/distccd-$SPORT.log"
	_user=""
	[ "$(id -u)" = 0 ] && _user="--user distccd"
	: >"$SLOG"
	# distccd drops to its own user when started as root: let it reach
	# and write its log.
	chmod 755 "$T" 2>/dev/null || true
	chmod 666 "$SLOG" 2>/dev/null || true
	# shellcheck disable=SC2086
	distccd --daemon --no-detach --allow 127.0.0.1 --listen 127.0.0.1 \
		--port "$SPORT" --stats --stats-port "$SSPORT" --jobs 2 \
		--log-file "$SLOG" --verbose $_user "$@" >"$SLOG.out" 2>&1 &
	SPID=$!
	_PIDS="$_PIDS $SPID"
	if ! $DCC wait-http "$SSPORT" 15; then
		log "distccd did not come up"
		tail -n 20 "$SLOG" "$SLOG.out" 2>/dev/null
		return 1
	fi
	return 0
}

# dstat PORT FIELD: a counter from a stats page (distccd field names).
dstat() { $DCC stat "$1" "$2" 2>/dev/null || echo -1; }
# dstat_above PORT FIELD N: the counter once it exceeds N (daemons count a
# job just after replying), or its value after 3 s.
dstat_above() { $DCC stat "$1" "$2" --above "$3" 2>/dev/null || echo -1; }

# alive PID
alive() { kill -0 "$1" 2>/dev/null; }

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (0) or
# SECONDS pass (1)
wait_until() {
	_wn=$(($1 * 10)); shift
	while [ "$_wn" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_wn=$((_wn - 1))
	done
	return 1
}

# client_stat DIR NAME: a client counter of state dir DIR (0 when absent)
client_stat() {
	BOLTCC_DIR="$1" "$BOLTCC" --stats --json >"$T/st.json" 2>/dev/null
	_v=$(json_get "$T/st.json" "$2")
	case $_v in ''|*[!0-9]*) echo 0 ;; *) echo "$_v" ;; esac
}

# new_client_dir: a fresh, existing state dir for the client.
new_client_dir() {
	_d=$(mktemp -d "$T/cdir.XXXXXX")
	echo "$_d"
}

# write_sources: a few small C files in $T/src
write_sources() {
	mkdir -p "$T/src"
	cat >"$T/src/hello.h" <<'EOF'
#ifndef HELLO_H
#define HELLO_H
int hello_answer(int x);
#define HELLO_SCALE 3
#endif
EOF
	cat >"$T/src/hello.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "hello.h"

static const char *names[] = { "alpha", "beta", "gamma", "delta" };

int hello_answer(int x)
{
	size_t i, n = 0;
	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		n += strlen(names[i]) * (size_t)x;
	return (int)n * HELLO_SCALE;
}

int main(void)
{
	printf("answer %d\n", hello_answer(2));
	return 0;
}
EOF
	cat >"$T/src/warn.c" <<'EOF'
int warn_me(int a)
{
	int unused_variable_here;
	return a + 1;
}
EOF
	cat >"$T/src/broken.c" <<'EOF'
int broken(int a)
{
	return a + 1
}
EOF
}

# in_list VALUE CANDIDATES...
in_list() {
	_v=$1; shift
	for _x in "$@"; do
		[ "$_v" = "$_x" ] && return 0
	done
	return 1
}

# variant N: write hello_vN.c, hello.c with a string only this case uses,
# so that its preprocessed text is new and the job is really compiled
# (boltccd's artifact cache would answer a repeat), and print its name.
variant() {
	sed "s/answer %d/answer $1 %d/" "$T/src/hello.c" >"$T/src/hello_v$1.c"
	echo "hello_v$1.c"
}

# same_file A B: byte-identical
same_file() { cmp -s "$1" "$2"; }

# same_code A B: identical once debug info is stripped (plain-mode -g
# objects can differ from local ones in DW_AT_decl_column after macro
# expansion; stock distcc has the same property).
same_code() {
	objcopy --strip-debug "$1" "$T/.sc1.o" && objcopy --strip-debug "$2" "$T/.sc2.o" &&
		cmp -s "$T/.sc1.o" "$T/.sc2.o"
}

# elf_object FILE
elf_object() {
	[ -s "$1" ] && [ "$(od -An -c -N4 "$1" | tr -d ' ')" = '177ELF' ]
}

# client_stats_field JSONFILE KEY: integer from boltcc --stats --json
json_get() {
	$PYTHON - "$1" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("invalid-json")
    sys.exit(0)
def find(o, k):
    if isinstance(o, dict):
        if k in o:
            return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None:
                return r
    return None
v = find(d, sys.argv[2])
print("missing" if v is None else v)
EOF
}
