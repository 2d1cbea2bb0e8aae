#!/bin/sh
# t_pump_client.sh - boltcc in pump mode (hosts ",cpp,lzo"):
#  * against Debian's distccd (protocol 3): gcc and clang, -g0 and -g,
#    relative and absolute -I, a system header, -MD with the .d next to an
#    object in a subdirectory.  The job must go out in pump mode (client
#    counter jobs_pump, no preprocessor run), the object must equal a local
#    compile at -g0 (with -g distccd 3.4 leaves its temp dir in the debug
#    info: reported, not required), the .d must list the local .d's
#    dependencies;
#  * against boltccd in protocol 3 (",cpp,lzo,distcc"): the same, and the
#    object byte-identical to the local compile also with -g;
#  * scanner fallbacks go to plain mode and are counted by reason.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc distccd

P=$T/proj
mkdir -p "$P/src/inc" "$P/src/obj" "$P/absinc" "$P/keep"
cat >"$P/src/a.c" <<'EOF'
#include "h.h"
#include <abs.h>
#include <stdio.h>
int shown(void) { printf("%s:%d %d\n", __FILE__, __LINE__, H + ABS); return H; }
EOF
cat >"$P/src/inc/h.h" <<'EOF'
#include "deeper/d.h"
#define H (3 + D)
EOF
mkdir -p "$P/src/inc/deeper"
echo '#define D 5' >"$P/src/inc/deeper/d.h"
echo '#define ABS 4' >"$P/absinc/abs.h"
cat >"$P/src/comp.c" <<'EOF'
#define STR(x) #x
#define HDR STR(inc/h.h)
#include HDR
int comp(void) { return H; }
EOF
cat >"$P/src/comp2.c" <<'EOF'
#include "conf.h"
#include CONF_H
int comp2(void) { return H; }
EOF
echo '#define CONF_H "inc/h.h"' >"$P/src/conf.h"

# deps FILE: the dependency list of a .d, one word per line
deps() { tr -d '\\' <"$1" | tr -s ' \n' '\n\n' | grep -v '^$'; }


n=0
# pump_case LABEL HOSTS STRICT_G CC FLAGS...: compile a.c locally and in
# pump mode, compare.  STRICT_G=1: the -g object must be identical too.
pump_case() {
	_label=$1; _hosts=$2; _strict=$3; _cc=$4; shift 4
	n=$((n + 1))
	_cd="$T/cd$n"; mkdir -p "$_cd"
	cd "$P/src" || die "no src"
	rm -f obj/a.o obj/a.d
	"$_cc" "$@" -Iinc -I"$P/absinc" -MD -c a.c -o obj/a.o ||
		{ fail "$_label: local compile"; return; }
	mv obj/a.o "$P/keep/l.o"; mv obj/a.d "$P/keep/l.d"
	BOLTCC_DIR="$_cd" BOLTCC_HOSTS="$_hosts" DISTCC_FALLBACK=0 \
		DISTCC_VERBOSE=1 timeout 120 "$BOLTCC" "$_cc" "$@" -Iinc \
		-I"$P/absinc" -MD -c a.c -o obj/a.o 2>"$T/err$n.txt"
	_rc=$?
	check "$_label: boltcc exit 0 (got $_rc)" [ $_rc -eq 0 ]
	check "$_label: sent in pump mode" [ "$(client_stat "$_cd" jobs_pump)" = 1 ]
	check "$_label: no local preprocessor run" \
		sh -c "! grep -q 'preprocessing:' '$T/err$n.txt'"
	if [ "$_strict" = 1 ]; then
		check "$_label: object byte-identical to the local compile" \
			same_file "$P/keep/l.o" obj/a.o
	else
		case " $* " in
		*" -g "*)
			check "$_label: code identical to the local compile" \
				same_code "$P/keep/l.o" obj/a.o
			if same_file "$P/keep/l.o" obj/a.o; then
				note "$_label: object byte-identical"
			else
				note "$_label: debug info differs (distccd 3.4 leaves its temp dir in DWARF)"
			fi ;;
		*) check "$_label: object byte-identical to the local compile" \
			same_file "$P/keep/l.o" obj/a.o ;;
		esac
	fi
	deps "$P/keep/l.d" >"$T/l.deps"
	deps obj/a.d >"$T/r.deps" 2>/dev/null
	check "$_label: .d at obj/a.d with the local dependencies" \
		cmp -s "$T/l.deps" "$T/r.deps"
	# re-wrapped after the temp root was stripped (common/deps.c)
	check "$_label: .d byte-identical to the local .d" \
		cmp -s "$P/keep/l.d" obj/a.d
	cd "$T" || true
}

# --- 0. the captured stock pump requests, reproduced byte for byte ------
# (the captures ran in /tmp/dccvec/src with gcc 12 as x86_64-linux-gnu-gcc)
SINK="$T/sink.py"
cat >"$SINK" <<'EOF'
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
s.settimeout(60); c, _ = s.accept(); c.settimeout(30)
data, i = b"", 0
def need(n):
    global data
    while len(data) < n:
        b = c.recv(65536)
        if not b: raise SystemExit("eof")
        data += b
def hdr():
    global i
    need(i + 12); v = int(data[i+4:i+12], 16); i += 12; return v
def skip():
    global i
    v = hdr(); need(i + v); i += v
hdr(); skip()
for _ in range(hdr()): skip()
for _ in range(hdr()): skip(); skip()
open(sys.argv[2], "wb").write(data[:i])
EOF
VS="$VECTORS/src"
if [ -f "$VECTORS/p3-request.bin" ] && [ "$(gcc -dumpfullversion)" = 12.2.0 ] &&
	command -v x86_64-linux-gnu-gcc >/dev/null 2>&1 &&
	{ [ ! -e /tmp/dccvec/src ] || diff -r -x '*.o' -x '*.d' "$VS" /tmp/dccvec/src >/dev/null 2>&1; }; then
	mkdir -p /tmp/dccvec/src && cp -r "$VS/." /tmp/dccvec/src/
	for c in "p3|-c hello.c -o hello.o" \
	    "p3-sysdeps|-MD -c hello_sys.c -o hello_sys.o" \
	    "p3-absinc|-I/tmp/dccvec/src/inc -g -c /tmp/dccvec/src/absinc.c -o absinc.o"; do
		v=${c%%|*}; a=${c#*|}
		rm -f "$T/sinkport"
		$PYTHON "$SINK" "$T/sinkport" "$T/$v.req" 2>/dev/null &
		_s=$!
		for _i in $(seq 100); do [ -s "$T/sinkport" ] && break; sleep 0.1; done
		mkdir -p "$T/cdv-$v"
		# shellcheck disable=SC2086
		(cd /tmp/dccvec/src && BOLTCC_DIR="$T/cdv-$v" \
			BOLTCC_HOSTS="127.0.0.1:$(cat "$T/sinkport")/1,cpp,lzo,distcc" \
			DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" x86_64-linux-gnu-gcc $a \
			2>/dev/null)
		wait $_s
		check "$v: request byte-identical to the stock pump client's" \
			same_file "$T/$v.req" "$VECTORS/$v-request.bin"
	done
	rm -f /tmp/dccvec/src/*.o /tmp/dccvec/src/*.d
else
	note "captures, gcc 12.2 or a clean /tmp/dccvec/src missing: request bytes not compared"
fi

# --- 1. Debian's distccd, protocol 3 ------------------------------------
start_distccd || die "cannot start distccd"
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { note "no $cc"; continue; }
	for g in -g0 -g; do
		pump_case "distccd $cc $g" "127.0.0.1:$SPORT/2,cpp,lzo,distcc" 0 \
			$cc $g -O1
	done
done
check "distccd received the files (pump mode)" \
	grep -q "received .* bytes to file .*distccd_[^/]*/.*/proj/absinc/abs.h" "$SLOG"

# --- 2. boltccd, protocol 3 ---------------------------------------------
start_boltccd || die "cannot start boltccd"
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || continue
	for g in -g0 -g; do
		pump_case "boltccd p3 $cc $g" "127.0.0.1:$DPORT/2,cpp,lzo,distcc" 1 \
			$cc $g -O1
	done
done

# --- 3. boltccd, BOLT pump (",cpp,lzo,bolt"): zstd, content-addressed --
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || continue
	for g in -g0 -g; do
		pump_case "boltccd bolt-pump $cc $g" \
			"127.0.0.1:$DPORT/2,cpp,lzo,bolt" 1 $cc $g -O1
	done
done
check "the daemon took the BOLT pump requests" \
	grep -q "bolt pump tree" "$DLOG"

# dedup: a first build of a fresh tree, then the same build again
mkdir -p "$P/dd/inc"
for i in 1 2 3 4; do
	{ echo "#include \"inc/big$i.h\""; echo "int u$i(void) { return B$i; }"; } >"$P/dd/u$i.c"
	{ echo "#define B$i $i"; i2=0; while [ $i2 -lt 300 ]; do
		echo "int dd_${i}_$i2(int x); /* padding text of a header that is not small */"
		i2=$((i2 + 1)); done; } >"$P/dd/inc/big$i.h"
done
_cd="$T/cddd"; mkdir -p "$_cd"
build_dd() {
	(cd "$P/dd" && for i in 1 2 3 4; do
		BOLTCC_DIR="$_cd" BOLTCC_HOSTS="127.0.0.1:$DPORT/2,cpp,lzo,bolt" \
			DISTCC_FALLBACK=0 "$BOLTCC" gcc -O1 -c u$i.c -o u$i.o || exit 1
	done)
}
build_dd || fail "dedup: first build"
b1=$(client_stat "$_cd" bytes_sent); n1=$(client_stat "$_cd" pump_files_needed)
build_dd || fail "dedup: second build"
b2=$(( $(client_stat "$_cd" bytes_sent) - b1 ))
n2=$(( $(client_stat "$_cd" pump_files_needed) - n1 ))
note "dedup: first build sent $b1 bytes ($n1 files), second $b2 bytes ($n2 files)"
check "dedup: the first build sent the files (8 needed, got $n1)" [ "$n1" -eq 8 ]
check "dedup: the second build sent no file again (got $n2)" [ "$n2" -eq 0 ]
check "dedup: the second build sent fewer bytes ($b2 < $b1)" [ "$b2" -lt "$b1" ]

# a lying client: the body does not hash to the manifest's SHA-256 -> EROR,
# nothing stored, the daemon keeps serving
cat >"$T/tamper.py" <<'EOF'
import hashlib, socket, sys
def pkt(t, v): return t.encode() + b"%08x" % v
def pstr(t, b):
    if isinstance(b, str): b = b.encode()
    return pkt(t, len(b)) + b
claim = hashlib.sha256(b"int claimed;\n").digest()
argv = ["gcc", "-c", "t.c", "-o", "t.o"]
req = pkt("BOLT", 1) + pkt("RQST", 5) + pkt("FLAG", 0) + pstr("CDIR", "/w")
req += pkt("ARGC", len(argv)) + b"".join(pstr("ARGV", a) for a in argv)
req += pkt("NFIL", 1) + pstr("NAME", "/w/t.c") + pstr("HASH", claim)
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
s.settimeout(30)
s.sendall(req)
def rd(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: break
        b += c
    return b
need = rd(12 + 12 + 12)          # BOLT, NEED 1, INDX 0
print("need:", need.decode("latin1"))
s.sendall(pkt("FILE", 0))        # empty contents: not what was claimed
rest = b""
while True:
    c = s.recv(65536)
    if not c: break
    rest += c
print("reply:", rest[:80].decode("latin1"))
print("sha:", claim.hex())
EOF
$PYTHON "$T/tamper.py" "$DPORT" >"$T/tamper.out" 2>&1
check "tampered file: the daemon asked for it" grep -q "need: BOLT00000001NEED00000001INDX00000000" "$T/tamper.out"
check "tampered file: refused with EROR" grep -q "reply: BOLT00000001EROR" "$T/tamper.out"
_sha=$(sed -n 's/^sha: //p' "$T/tamper.out")
check "tampered file: nothing stored under the claimed hash" \
	test ! -e "$T/cache-$DPORT/pumpfiles/$(echo "$_sha" | cut -c1-2)/$_sha"
check "tampered file: the log says why" grep -q "do not match the manifest" "$DLOG"
check "daemon still alive after the tampered request" alive "$DPID"
check "daemon stores files under its cache dir" \
	sh -c "ls '$T/cache-$DPORT/pumpfiles' | grep -q '^[0-9a-f][0-9a-f]$'"

# --- 4. header maps and frameworks, BOLT pump, clang --------------------
HMAP="$SPEC/xcode-tools/hmap.py"
if [ -f "$HMAP" ] && command -v clang >/dev/null 2>&1; then
	X=$T/xc
	mkdir -p "$X/proj/src" "$X/proj/build" "$X/hdrs/private" "$X/lib" \
		"$X/Frameworks/Foo.framework/Headers" \
		"$X/Frameworks/Foo.framework/PrivateHeaders"
	cat >"$X/proj/src/main.c" <<'EOF'
#include "Widget.h"
#include <MyLib/Bar.h>
#include "Baz.h"
#include <Foo/Foo.h>
#include <Foo/FooPriv.h>
#include <stdio.h>
int run(void) { printf("%s %d\n", __FILE__, WIDGET + BAR + FOO); return foo_priv(); }
EOF
	echo '#define WIDGET 1' >"$X/hdrs/private/Widget.h"
	printf '#ifndef BAR_H\n#define BAR_H\n#define BAR 2\n#endif\n' >"$X/lib/Bar.h"
	printf '#define FOO 3\n' \
		>"$X/Frameworks/Foo.framework/Headers/Foo.h"
	echo 'static inline int foo_priv(void) { return 4; }' \
		>"$X/Frameworks/Foo.framework/PrivateHeaders/FooPriv.h"
	$PYTHON "$HMAP" write "$X/proj/build/own.hmap" \
		"Widget.h=$X/hdrs/private/Widget.h" || die "hmap.py failed"
	$PYTHON "$HMAP" write "$X/proj/build/all.hmap" \
		"MyLib/Bar.h=$X/lib/Bar.h" "Baz.h=MyLib/Bar.h" || die "hmap.py failed"
	XF="-iquote ../build/own.hmap -I$X/proj/build/all.hmap -F$X/Frameworks"
	for g in -g0 -g; do
		n=$((n + 1)); _cd="$T/cd$n"; mkdir -p "$_cd"
		cd "$X/proj/src" || die "no xc src"
		rm -f main.o main.d
		# shellcheck disable=SC2086
		clang $g -O1 $XF -MD -c main.c -o main.o || { fail "xc $g: local compile"; continue; }
		mv main.o l.o; mv main.d l.d
		# shellcheck disable=SC2086
		BOLTCC_DIR="$_cd" BOLTCC_HOSTS="127.0.0.1:$DPORT/2,cpp,lzo,bolt" \
			DISTCC_FALLBACK=0 "$BOLTCC" clang $g -O1 $XF -MD -c main.c -o main.o \
			2>"$T/xc$n.txt"
		check "hmap+framework $g: compiled" [ -s main.o ]
		check "hmap+framework $g: sent in pump mode" \
			[ "$(client_stat "$_cd" jobs_pump)" = 1 ]
		check "hmap+framework $g: object byte-identical to the local compile" \
			same_file l.o main.o
		deps l.d >"$T/l.deps"; deps main.d >"$T/r.deps" 2>/dev/null
		check "hmap+framework $g: .d lists the local dependencies" \
			cmp -s "$T/l.deps" "$T/r.deps"
		check "hmap+framework $g: .d byte-identical to the local .d" \
			cmp -s l.d main.d
		cd "$T" || true
	done
	check "the daemon rebased the header maps" grep -q "header map .* rebased" "$DLOG"
	# toward a stock distccd the same job goes to plain mode, by reason
	_cd="$T/cdxs"; mkdir -p "$_cd"
	# shellcheck disable=SC2086
	(cd "$X/proj/src" && BOLTCC_DIR="$_cd" \
		BOLTCC_HOSTS="127.0.0.1:$SPORT/2,cpp,lzo,distcc" DISTCC_FALLBACK=0 \
		"$BOLTCC" clang -O1 $XF -c main.c -o s.o 2>/dev/null)
	check "hmap toward distccd: plain mode, counted as header-map" \
		[ "$(client_stat "$_cd" pump_fallback_by_reason:header-map)" = 1 ]
else
	note "hmap.py or clang missing: header-map project not built"
fi

# --- 5. fallbacks are counted by reason ---------------------------------
_cd="$T/cdfb"; mkdir -p "$_cd"
cd "$P/src" || die "no src"
BOLTCC_DIR="$_cd" BOLTCC_HOSTS="127.0.0.1:$DPORT/2,cpp,lzo,distcc" \
	DISTCC_FALLBACK=0 DISTCC_VERBOSE=1 "$BOLTCC" gcc -c comp.c -o obj/comp.o \
	2>"$T/fb.txt"
check "computed include: compiled (plain mode)" [ -s obj/comp.o ]
check "computed include: counted as pump_fallback_by_reason:computed-include" \
	[ "$(client_stat "$_cd" pump_fallback_by_reason:computed-include)" = 1 ]
check "computed include: not sent in pump mode" \
	[ "$(client_stat "$_cd" jobs_pump)" = 0 ]
check "computed include: the local preprocessor ran (plain mode)" \
	grep -q 'preprocessing:' "$T/fb.txt"
BOLTCC_DIR="$_cd" BOLTCC_HOSTS="127.0.0.1:$DPORT/2,cpp,lzo,distcc" \
	DISTCC_FALLBACK=0 "$BOLTCC" gcc -c comp2.c -o obj/comp2.o 2>>"$T/fb.txt"
gcc -c comp2.c -o obj/comp2-local.o
check "#include MACRO defined as a header name: sent in pump mode" \
	[ "$(client_stat "$_cd" jobs_pump)" = 1 ]
check "#include MACRO: object identical to the local compile" \
	same_file obj/comp2.o obj/comp2-local.o
CPATH=/nonexistent BOLTCC_DIR="$_cd" \
	BOLTCC_HOSTS="127.0.0.1:$DPORT/2,cpp,lzo,distcc" DISTCC_FALLBACK=0 \
	"$BOLTCC" gcc -c a.c -Iinc -I"$P/absinc" -o obj/cp.o 2>>"$T/fb.txt"
check "CPATH set: counted as pump_fallback_by_reason:cpath-env" \
	[ "$(client_stat "$_cd" pump_fallback_by_reason:cpath-env)" = 1 ]
cd "$T" || true
finish
