#!/bin/sh
# t_distccd_server.sh - boltcc against Debian's stock `distccd`:
# protocol 1 and 2, the host marked ",distcc" in BOLTCC_HOSTS and a plain
# DISTCC_HOSTS entry where boltcc's probe must learn that the host is a
# stock distccd (and not mark it bad).  Objects identical to local at -g0.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool distccd gcc
write_sources
start_distccd || die "cannot start distccd"
cd "$T/src" || die "no src"

n=0
# via LABEL VAR HOSTS COMPILER ARGS...: VAR is BOLTCC_HOSTS or DISTCC_HOSTS;
# two compiles with one fresh state dir (the second after the probe).
via() {
	_label=$1; _var=$2; _hosts=$3; _cc=$4; shift 4
	n=$((n + 1))
	_dir="$T/cd$n"
	mkdir -p "$_dir"
	"$_cc" "$@" -c hello.c -o l.o || { fail "$_label: local compile"; return; }
	for _round in first second; do
		rm -f r.o
		_before=$(dstat "$SSPORT" dcc_compile_ok)
		env BOLTCC_DIR="$_dir" "$_var=$_hosts" DISTCC_FALLBACK=0 \
			timeout 60 "$BOLTCC" "$_cc" "$@" -c hello.c -o r.o 2>"$T/err.txt"
		_rc=$?
		_after=$(dstat_above "$SSPORT" dcc_compile_ok "$_before")
		check "$_label ($_round job): boltcc exit 0 (got $_rc)" [ $_rc -eq 0 ]
		[ -s "$T/err.txt" ] && sed 's/^/    stderr: /' "$T/err.txt" | head -n 5
		check "$_label ($_round job): distccd compiled it (dcc_compile_ok $_before -> $_after)" \
			[ "$_after" -gt "$_before" ]
		check "$_label ($_round job): object identical to local" same_file l.o r.o
	done
}

H="127.0.0.1:$SPORT"
via "BOLTCC_HOSTS ,distcc proto 1 gcc" BOLTCC_HOSTS "$H,distcc" gcc -O2 -g0
via "BOLTCC_HOSTS ,distcc,lzo proto 2 gcc" BOLTCC_HOSTS "$H,lzo,distcc" gcc -O2 -g0
via "DISTCC_HOSTS probe proto 1 gcc" DISTCC_HOSTS "$H" gcc -O2 -g0
via "DISTCC_HOSTS probe proto 2 gcc" DISTCC_HOSTS "$H,lzo" gcc -O2 -g0
if command -v clang >/dev/null 2>&1; then
	via "BOLTCC_HOSTS ,distcc,lzo proto 2 clang" BOLTCC_HOSTS "$H,lzo,distcc" clang -O2 -g0
	via "DISTCC_HOSTS probe proto 1 clang" DISTCC_HOSTS "$H" clang -O2 -g0
fi

# A compile error on the stock daemon comes back as the compiler's.
mkdir -p "$T/cde"
BOLTCC_DIR="$T/cde" BOLTCC_HOSTS="$H,lzo,distcc" DISTCC_SKIP_LOCAL_RETRY=1 \
	timeout 60 "$BOLTCC" gcc -c broken.c -o b.o 2>"$T/err.txt"
rc=$?
check "compile error via distccd: exit 1 (got $rc)" [ $rc -eq 1 ]
check "compile error via distccd: message shown" grep -q "expected ';'" "$T/err.txt"

check "distccd still alive" alive "$SPID"
finish
