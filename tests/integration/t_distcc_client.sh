#!/bin/sh
# t_distcc_client.sh - Debian's stock `distcc` client against boltccd:
# protocol 1 ('127.0.0.1:P') and 2 ('127.0.0.1:P,lzo'), gcc and clang.
# The stock client rewrites gcc to x86_64-linux-gnu-gcc (and appends
# -target to clang); boltccd must accept that by default.  The client must
# not fall back (DISTCC_FALLBACK=0 and the daemon's counter), and the
# object must equal a local compile.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool distcc gcc
write_sources
start_boltccd || die "cannot start boltccd"
cd "$T/src" || die "no src"

n=0
# stock_same LABEL HOSTS COMPILER ARGS...
stock_same() {
	_label=$1; _hosts=$2; _cc=$3; shift 3
	n=$((n + 1))
	_dd="$T/dd$n"
	mkdir -p "$_dd"
	rm -f l.o r.o
	_src=$(variant "$n")
	"$_cc" "$@" -c "$_src" -o l.o || { fail "$_label: local compile"; return; }
	_before=$(dstat "$DSPORT" dcc_compile_ok)
	DISTCC_DIR="$_dd" DISTCC_HOSTS="$_hosts" DISTCC_FALLBACK=0 \
	DISTCC_VERBOSE=1 DISTCC_LOG="$T/distcc-client-$n.log" \
		timeout 60 distcc "$_cc" "$@" -c "$_src" -o r.o 2>"$T/err.txt"
	_rc=$?
	_after=$(dstat_above "$DSPORT" dcc_compile_ok "$_before")
	check "$_label: distcc exit 0 (got $_rc)" [ $_rc -eq 0 ]
	check "$_label: boltccd compiled it (dcc_compile_ok $_before -> $_after)" \
		[ "$_after" -gt "$_before" ]
	case " $* " in
	*" -g "*)
		check "$_label: object identical to local compile (debug info aside)" same_code l.o r.o
		same_file l.o r.o || note "$_label: debug info differs from local (plain-mode preprocessing; stock distccd does the same)"
		;;
	*) check "$_label: object identical to local compile" same_file l.o r.o ;;
	esac
	if grep -q 'failed to distribute\|running locally' "$T/distcc-client-$n.log" 2>/dev/null; then
		fail "$_label: the distcc client fell back to a local compile"
		grep 'ERROR\|Warning\|failed' "$T/distcc-client-$n.log" | head -n 5
	fi
}

P1="127.0.0.1:$DPORT"
P2="127.0.0.1:$DPORT,lzo"
stock_same "distcc proto 1 gcc" "$P1" gcc -O2 -g0
stock_same "distcc proto 2 gcc" "$P2" gcc -O2 -g0
stock_same "distcc proto 2 gcc -g" "$P2" gcc -O1 -g
if command -v clang >/dev/null 2>&1; then
	stock_same "distcc proto 1 clang" "$P1" clang -O2 -g0
	stock_same "distcc proto 2 clang" "$P2" clang -O2 -g0
fi
check "daemon log shows the rewritten name x86_64-linux-gnu-gcc accepted" \
	grep -q 'x86_64-linux-gnu-gcc' "$DLOG"

# A compile error through the stock client: exit 1, message shown.
mkdir -p "$T/dde"
DISTCC_DIR="$T/dde" DISTCC_HOSTS="$P2" DISTCC_SKIP_LOCAL_RETRY=1 \
	timeout 60 distcc gcc -c broken.c -o b.o 2>"$T/err.txt"
rc=$?
check "distcc proto 2 compile error: exit 1 (got $rc)" [ $rc -eq 1 ]
check "distcc proto 2 compile error: remote message shown" grep -q "expected ';'" "$T/err.txt"
check "distcc proto 2 compile error: daemon counted dcc_compile_error" \
	[ "$(dstat_above "$DSPORT" dcc_compile_error 0)" -ge 1 ]

check "daemon still alive" alive "$DPID"
finish
