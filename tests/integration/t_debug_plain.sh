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

# a job that wants a .dia (Xcode) goes out plain by default: pump mode
# cannot return a .dia yet (doc/fidelity.md); BOLTCC_PLAIN_DEBUG=0 keeps it
n=$((n + 1))
r0=$(stat_of jobs_remote_ok)
(cd "$T/src" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$PUMP" DISTCC_FALLBACK=0 \
	"$BOLTCC" clang -g -O1 --serialize-diagnostics "$T/r$n.dia" m.c -c \
	-o "$T/r$n.o") || die "dia job"
check ".dia + -g: out in plain mode by default" \
	test "$(stat_of jobs_remote_ok)" = $((r0 + 1))
n=$((n + 1))
(cd "$T/src" && clang -g -O1 --serialize-diagnostics "$T/l$n.dia" m.c -c \
	-o "$T/l$n.o") || die "local dia"
(cd "$T/src" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$PUMP" DISTCC_FALLBACK=0 \
	BOLTCC_PLAIN_DEBUG=0 "$BOLTCC" clang -g -O1 --serialize-diagnostics \
	"$T/r$n.dia" m.c -c -o "$T/r$n.o") || die "dia job, 0"
check ".dia + -g, BOLTCC_PLAIN_DEBUG=0: compiled locally, identical" \
	same_file "$T/l$n.o" "$T/r$n.o"
check ".dia + -g, BOLTCC_PLAIN_DEBUG=0: counted debug-info" \
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
