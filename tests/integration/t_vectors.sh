#!/bin/sh
# t_vectors.sh - replay the requests captured from Debian's distcc 3.4
# client (tests/data/spec/vectors) to boltccd and check
# each reply: valid distcc reply of the same protocol version, STAT as the
# real distccd answered, DOTO an ELF relocatable object.  The p1 reply is
# also compared byte-for-byte with the captured distccd reply: identical
# only if this machine's gcc is the one of the capture (gcc 12.2, Debian
# 12), so a difference is reported, not failed.
. "$(dirname "$0")/lib.sh"
need_binaries
[ -f "$VECTORS/p1-request.bin" ] ||
	die "captured vectors not found at $VECTORS (tests/data/spec/vectors)"
start_boltccd || die "cannot start boltccd"

# replay NAME PROTO EXPECTED-STAT FILE
replay() {
	_name=$1; _proto=$2; _stat=$3; _file=$4
	_before=$(dstat "$DSPORT" dcc_tcp_accept)
	$DCC replay "$DPORT" "$_file" --out "$T/$_name-reply.bin" --timeout 60 2>"$T/replay.txt"
	note "$_name: $(cat "$T/replay.txt")"
	if $DCC check-reply "$T/$_name-reply.bin" --proto "$_proto" \
		--expect-stat "$_stat" --doto "$T/$_name.o" >"$T/check.txt"; then
		pass "$_name: valid protocol $_proto reply, STAT $_stat$( [ "$_stat" = 0 ] && echo ', ELF object')"
	else
		fail "$_name: reply check failed"
	fi
	sed 's/^/    /' "$T/check.txt"
}

for v in p1 p2 p2-clang p2-absinc p2-error; do
	[ -f "$VECTORS/$v-request.bin" ] || { note "$v-request.bin missing, not run"; continue; }
	case $v in
	p1) proto=1 ;;
	*) proto=2 ;;
	esac
	stat=0
	[ "$v" = p2-error ] && stat=0x100
	case $v in
	*clang*) command -v clang >/dev/null 2>&1 || { note "no clang: $v not run"; continue; } ;;
	esac
	replay "$v" "$proto" "$stat" "$VECTORS/$v-request.bin"
	# the object Debian's distccd returned for the same request
	if [ "$stat" = 0 ] && [ -f "$VECTORS/$v-reply.bin" ] &&
		$DCC check-reply "$VECTORS/$v-reply.bin" --proto "$proto" --doto "$T/$v-distccd.o" --quiet >/dev/null; then
		if same_file "$T/$v.o" "$T/$v-distccd.o"; then
			pass "$v: object identical to the one distccd returned in the capture"
		else
			note "$v: object differs from the captured distccd one (compiler version $(gcc -dumpfullversion))"
		fi
	fi
done

# Compare with what Debian's distccd answered for the same bytes.
if [ -f "$T/p1-reply.bin" ] && [ -f "$VECTORS/p1-reply.bin" ]; then
	if cmp -s "$T/p1-reply.bin" "$VECTORS/p1-reply.bin"; then
		pass "p1: reply byte-identical to the captured distccd reply"
	else
		ver=$(gcc -dumpfullversion 2>/dev/null)
		note "p1: reply differs from the captured distccd reply (local gcc $ver;"
		note "    the capture used Debian gcc 12.2.0: objects differ with the compiler)"
		if [ "$ver" = 12.2.0 ]; then
			fail "p1: same gcc as the capture but a different reply"
			cmp "$T/p1-reply.bin" "$VECTORS/p1-reply.bin" | head -n 3
		fi
	fi
fi
if [ -f "$T/p2.o" ] && [ -f "$T/p1.o" ]; then
	check "p1 and p2 (same source) give the same object" same_file "$T/p1.o" "$T/p2.o"
fi

# The D11 variants, built from p1: uppercase hex is accepted, an empty
# ARGV reaches the compiler (error, STAT 0x100), DIST 0 must be refused.
if [ -f "$VECTORS/p1-request.bin" ]; then
	$PYTHON - "$VECTORS/p1-request.bin" "$T" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
t = sys.argv[2]
open(t + "/upper.bin", "wb").write(d.replace(b"DOTI000000e5", b"DOTI000000E5"))
e = d.replace(b"ARGC00000005", b"ARGC00000006", 1)
k = e.index(b"DOTI")
open(t + "/emptyarg.bin", "wb").write(e[:k] + b"ARGV00000000" + e[k:])
open(t + "/dist0.bin", "wb").write(b"DIST00000000" + d[12:])
EOF
	replay "D11-upper" 1 0 "$T/upper.bin"
	# distccd 3.4 runs gcc with the empty argument (STAT 0x100); refusing
	# the request (silent close + a log line) is fine too.
	before=$(wc -l <"$DLOG")
	$DCC replay "$DPORT" "$T/emptyarg.bin" --out "$T/emptyarg-reply.bin" --timeout 30 2>"$T/replay.txt"
	note "D11-emptyarg: $(cat "$T/replay.txt")"
	if [ -s "$T/emptyarg-reply.bin" ]; then
		check "D11-emptyarg: answered with a compile failure (STAT 0x100)" \
			$DCC check-reply "$T/emptyarg-reply.bin" --proto 1 --expect-stat 0x100 --quiet
	else
		sleep 0.2
		line=$(tail -n +"$((before + 1))" "$DLOG" | grep -Ei 'warn|error|refus|reject' | head -n 1)
		check "D11-emptyarg: refused, reason logged: $line" [ -n "$line" ]
	fi
	$DCC replay "$DPORT" "$T/dist0.bin" --out "$T/dist0-reply.bin" --timeout 20 2>"$T/replay.txt"
	note "D11-dist0: $(cat "$T/replay.txt")"
	if [ -s "$T/dist0-reply.bin" ]; then
		fail "D11-dist0: DIST00000000 was answered ($(head -c 24 "$T/dist0-reply.bin"))"
	else
		pass "D11-dist0: DIST00000000 refused with a silent close"
	fi
fi

check "daemon still alive" alive "$DPID"
finish
