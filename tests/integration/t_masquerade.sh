#!/bin/sh
# t_masquerade.sh - masquerade mode: a directory first on PATH with
# `gcc -> boltcc` (and clang); a plain `gcc -c x.c` is distributed (daemon
# counter goes up), does not recurse into itself, and the object equals a
# local compile.  Also: two masquerade directories in a row must not loop.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
write_sources
start_boltccd || die "cannot start boltccd"
REALGCC=$(command -v gcc)
REALCLANG=$(command -v clang 2>/dev/null || true)

mkdir -p "$T/mbin" "$T/mbin2"
ln -s "$BOLTCC" "$T/mbin/gcc"
ln -s "$BOLTCC" "$T/mbin/clang"
ln -s "$BOLTCC" "$T/mbin2/gcc"
cd "$T/src" || die "no src"
BOLTCC_DIR=$(new_client_dir)
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
export BOLTCC_DIR BOLTCC_HOSTS

# masq LABEL NAME REAL
masq() {
	_label=$1; _name=$2; _real=$3
	_src=$(variant "$_name")
	"$_real" -O2 -g0 -c "$_src" -o l.o || { fail "$_label: local compile"; return; }
	rm -f r.o
	_before=$(dstat "$DSPORT" dcc_compile_ok)
	PATH="$T/mbin:$PATH" DISTCC_FALLBACK=0 timeout 60 "$_name" -O2 -g0 -c "$_src" -o r.o 2>"$T/err.txt"
	_rc=$?
	_after=$(dstat_above "$DSPORT" dcc_compile_ok "$_before")
	check "$_label: exit 0 (got $_rc)" [ $_rc -eq 0 ]
	[ -s "$T/err.txt" ] && sed 's/^/    stderr: /' "$T/err.txt" | head -n 5
	check "$_label: distributed (dcc_compile_ok $_before -> $_after)" [ "$_after" -gt "$_before" ]
	check "$_label: object identical to local" same_file l.o r.o
}

check "PATH lookup finds the masquerade link" \
	[ "$(PATH="$T/mbin:$PATH" command -v gcc)" = "$T/mbin/gcc" ]
masq "masquerade gcc" gcc "$REALGCC"
if [ -n "$REALCLANG" ]; then
	masq "masquerade clang" clang "$REALCLANG"
fi

# Linking through the masquerade name runs the real compiler locally.
rm -f prog
PATH="$T/mbin:$PATH" timeout 60 gcc -o prog hello.c 2>"$T/err.txt"
rc=$?
check "masquerade link: exit 0 (got $rc)" [ $rc -eq 0 ]
check "masquerade link: program runs" sh -c "./prog | grep -q 'answer'"

# Two masquerade dirs in a row: must terminate (compile or refuse with
# distcc's recursion code 111), never loop.
rm -f r2.o
PATH="$T/mbin:$T/mbin2:$PATH" timeout 30 gcc -c hello.c -o r2.o 2>"$T/err.txt"
rc=$?
note "two masquerade dirs: exit $rc $(head -n 1 "$T/err.txt")"
check "two masquerade dirs: no endless recursion (exit $rc; 0 or 111)" in_list $rc 0 111

# The safeguard variable set by an outer boltcc makes an inner one local.
rm -f r3.o
before=$(dstat "$DSPORT" dcc_compile_ok)
_DISTCC_SAFEGUARD=1 PATH="$T/mbin:$PATH" timeout 30 gcc -c hello.c -o r3.o 2>"$T/err.txt"
rc=$?
note "_DISTCC_SAFEGUARD=1: exit $rc, dcc_compile_ok $before -> $(dstat "$DSPORT" dcc_compile_ok)"
check "nested invocation (_DISTCC_SAFEGUARD=1) terminates (exit $rc)" in_list $rc 0 111

check "daemon still alive" alive "$DPID"
finish
