#!/bin/sh
# t_debug_plain.sh - debug info keeps byte identity in every mode.  A job
# with -g that would go out in plain mode (a ,plain host, a scanner
# fallback) toward boltccd gets other debug info from the .i than the
# local compile (clang's DWARF 5 line table has no MD5s, gcc's columns
# move on a line with a macro): such a job is compiled locally (reason
# debug-info) unless the .i gives the same object (clang -gdwarf-4, gcc
# -gno-column-info) or BOLTCC_PLAIN_DEBUG=1 asks for plain mode anyway.
# Every object is compared with the local compile of the same command.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc clang

mkdir -p "$T/src"
cat >"$T/src/m.c" <<'EOF2'
#include <stdio.h>
#define TWICE(x) ((x) + (x))
int f(int a) { int b = TWICE(a); return b * 3; }
int main(void) { printf("%d\n", f(2)); return 0; }
EOF2
cat >"$T/src/comp.c" <<'EOF2'
#define STR(x) #x
#define HDR STR(h.h)
#include HDR
int g(void) { return H; }
EOF2
echo '#define H 3' >"$T/src/h.h"

start_boltccd || die "boltccd did not start"
CDIR=$(new_client_dir)
stat_of() { client_stat "$CDIR" "$1"; }

# run LABEL HOSTS EXPECT(local|remote) [ENV=V] -- CC FLAGS... SRC
n=0
run() {
	_label=$1; _hosts=$2; _expect=$3; shift 3
	_env=""
	while [ "$1" != -- ]; do _env="$_env $1"; shift; done
	shift
	n=$((n + 1))
	_src=$(eval echo "\${$#}")
	_l0=$(stat_of jobs_local); _r0=$(stat_of jobs_remote_ok)
	(cd "$T/src" && "$@" -c -o "$T/l$n.o") || die "local $*"
	# shellcheck disable=SC2086
	(cd "$T/src" && env BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$_hosts" \
		DISTCC_FALLBACK=0 $_env "$BOLTCC" "$@" -c -o "$T/r$n.o") \
		2>"$T/err$n" || { fail "$_label: boltcc failed"; cat "$T/err$n"; return; }
	if [ "$_expect" = local ]; then
		check "$_label: compiled locally" \
			test "$(stat_of jobs_local)" = $((_l0 + 1))
	else
		check "$_label: compiled remotely" \
			test "$(stat_of jobs_remote_ok)" = $((_r0 + 1))
	fi
	check "$_label: object identical to the local compile" \
		same_file "$T/l$n.o" "$T/r$n.o"
}

PLAIN="127.0.0.1:$DPORT,bolt,plain"
PUMP="127.0.0.1:$DPORT,bolt"
d0=$(stat_of local_by_reason.debug-info)
run "clang -g, ,plain host" "$PLAIN" local -- clang -g -O1 m.c
run "gcc -g, ,plain host" "$PLAIN" local -- gcc -g -O1 m.c
run "clang -g, scanner fallback" "$PUMP" local -- clang -g -O1 comp.c
run "gcc -g, scanner fallback" "$PUMP" local -- gcc -g -O1 comp.c
run "clang -g, pump" "$PUMP" remote -- clang -g -O1 m.c
run "gcc -g, pump" "$PUMP" remote -- gcc -g -O1 m.c
run "clang -g -gdwarf-4, ,plain host" "$PLAIN" local -- \
	clang -g -gdwarf-4 -O1 m.c
run "clang -g -gdwarf-4 -gno-column-info, ,plain host" "$PLAIN" remote -- \
	clang -g -gdwarf-4 -gno-column-info -O1 m.c
run "clang -g -gno-column-info (DWARF 5), ,plain host" "$PLAIN" local -- \
	clang -g -gno-column-info -O1 m.c
run "gcc -g -gno-column-info, ,plain host" "$PLAIN" remote -- \
	gcc -g -gno-column-info -O1 m.c
run "clang -g0, ,plain host" "$PLAIN" remote -- clang -g0 -O1 m.c
BOLTCC_DIR="$CDIR" "$BOLTCC" --stats --json >"$T/st.json"
check "the client counts local_by_reason debug-info 6 times ($(json_get "$T/st.json" local_by_reason:debug-info))" \
	test "$(json_get "$T/st.json" local_by_reason:debug-info)" = 6

# a job that wants a .dia (Xcode's every compile) goes out in pump mode:
# its object and its .dia (warnings in a header and in the source, absolute
# paths as Xcode gives them) are the local compile's, also from the cache,
# and after a failed compile; toward a ,plain host it is compiled locally
mkdir -p "$T/src/inc"
cat >"$T/src/inc/w.h" <<'EOF2'
static int unused_in_header;
#warning "a warning from a header"
EOF2
cat >"$T/src/w.c" <<'EOF2'
#include "w.h"
int w(int a, int b) { int unused; if (a = b) return 1; return 0; }
EOF2
printf '#include "w.h"\nint e(void) { return missing; }\n' >"$T/src/e.c"
# dia_run LABEL HOSTS EXPECT TAG [ENV=V] -- CC FLAGS... SRC
dia_run() {
	_label=$1; _hosts=$2; _expect=$3; _tag=$4; shift 4
	_env=""
	while [ "$1" != -- ]; do _env="$_env $1"; shift; done
	shift
	_l0=$(stat_of jobs_local); _r0=$(stat_of jobs_remote_ok)
	_h0=$(stat_of cache_hits)
	(cd "$T/src" && "$@" --serialize-diagnostics "$T/l$_tag.dia" \
		-c -o "$T/l$_tag.o") 2>"$T/l$_tag.err"
	_lrc=$?
	# shellcheck disable=SC2086
	(cd "$T/src" && env BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$_hosts" \
		DISTCC_FALLBACK=0 DISTCC_SKIP_LOCAL_RETRY=1 $_env "$BOLTCC" \
		"$@" --serialize-diagnostics "$T/r$_tag.dia" -c \
		-o "$T/r$_tag.o") 2>"$T/r$_tag.err"
	_rrc=$?
	check "$_label: same exit status as local ($_lrc/$_rrc)" \
		test "$_lrc" = "$_rrc"
	case $_expect in
	local) check "$_label: compiled locally" \
		test "$(stat_of jobs_local)" = $((_l0 + 1)) ;;
	remote) check "$_label: compiled remotely" \
		test "$(stat_of jobs_remote_ok)" = $((_r0 + 1)) ;;
	hit) check "$_label: a cache hit" \
		test "$(stat_of cache_hits)" = $((_h0 + 1)) ;;
	error) check "$_label: failed remotely, not retried" \
		test "$(stat_of jobs_remote_error)" -ge 1 ;;
	esac
	[ "$_lrc" = 0 ] && check "$_label: object identical to local" \
		same_file "$T/l$_tag.o" "$T/r$_tag.o"
	check "$_label: .dia identical to local" \
		same_file "$T/l$_tag.dia" "$T/r$_tag.dia"
	check "$_label: stderr identical to local" \
		same_file "$T/l$_tag.err" "$T/r$_tag.err"
}
dia_run ".dia + -g, pump" "$PUMP" remote d1 -- \
	clang -g -O1 -Wall -I"$T/src/inc" "$T/src/w.c"
check ".dia + -g, pump: the .dia names the source and the header" \
	sh -c "grep -q '$T/src/w.c' '$T/rd1.dia' &&
		grep -q '$T/src/inc/w.h' '$T/rd1.dia'"
dia_run ".dia + -g, pump, again: from the cache" "$PUMP" hit d2 -- \
	clang -g -O1 -Wall -I"$T/src/inc" "$T/src/w.c"
dia_run ".dia, relative paths, pump" "$PUMP" remote d3 -- \
	clang -g0 -O2 -Wall -Iinc w.c
dia_run ".dia, a compile error, pump" "$PUMP" error d4 -- \
	clang -g -Iinc "$T/src/e.c"
dia_run ".dia + -g, ,plain host: local" "$PLAIN" local d5 -- \
	clang -g -O1 -Wall -I"$T/src/inc" "$T/src/w.c"
dia_run ".dia + -g, BOLTCC_PLAIN_DEBUG=0: pump all the same" "$PUMP" hit d6 \
	BOLTCC_PLAIN_DEBUG=0 -- clang -g -O1 -Wall -I"$T/src/inc" "$T/src/w.c"
check ".dia + -g: counted debug-info once more (the ,plain host)" \
	test "$(client_stat "$CDIR" local_by_reason:debug-info)" = 7

# BOLTCC_PLAIN_DEBUG=1: plain mode anyway; the code is the same, the
# line table is not (doc/fidelity.md)
n=$((n + 1))
(cd "$T/src" && clang -g -O1 m.c -c -o "$T/l$n.o") || die "local clang"
(cd "$T/src" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$PLAIN" \
	BOLTCC_PLAIN_DEBUG=1 DISTCC_FALLBACK=0 "$BOLTCC" clang -g -O1 m.c \
	-c -o "$T/r$n.o") || die "plain debug"
check "BOLTCC_PLAIN_DEBUG=1: code identical" same_code "$T/l$n.o" "$T/r$n.o"
check "BOLTCC_PLAIN_DEBUG=1: went out plain (its debug info differs)" \
	sh -c "! cmp -s '$T/l$n.o' '$T/r$n.o'"
check "daemon still alive" alive "$DPID"
finish
