#!/bin/sh
# t_pump.sh - boltccd serving distcc protocol 3 (pump mode):
#  * the captured pump requests (shared/spec/vectors/p3-*) replayed: valid
#    replies; p3 and p3-error byte-identical to Debian distccd's replies
#    when this machine has the capture's gcc; no daemon temp path in any
#    object (distcc 3.4 leaves one in .debug_line_str of p3-absinc);
#  * protocol-3 requests built here for a small tree (absolute and relative
#    -I, a system header through distcc's system-directory link): the
#    objects are byte-identical to local compiles, gcc and clang, -g0 and
#    -g, and the DOTD names the client's paths;
#  * hostile trees (NAME with .., absolute and escaping LINKs, writing
#    through a link) are refused with a silent close, nothing is written
#    outside the job root, and the daemon keeps serving.
. "$(dirname "$0")/lib.sh"
need_binaries
start_boltccd || die "cannot start boltccd"

P3PY="$T/p3.py"
cat >"$P3PY" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["HERE"])
import dcc

request = dcc.p3_request
sysdir_link = dcc.p3_sysdir_link

def parse(d):
    i, out = 0, {}
    while i + 12 <= len(d):
        tok = d[i:i+4].decode(); v = int(d[i+4:i+12], 16); i += 12
        if tok in ("DONE", "STAT"): out[tok] = v; continue
        body = d[i:i+v]; i += v
        out[tok] = dcc.lzo_decompress(body) if v else b""
    return out

cmd = sys.argv[1]
if cmd == "split":
    # split REPLY OBJ DOTD -> prints STAT
    r = parse(open(sys.argv[2], "rb").read())
    open(sys.argv[3], "wb").write(r.get("DOTO", b""))
    open(sys.argv[4], "wb").write(r.get("DOTD", b""))
    print("%x" % r.get("STAT", 0xdead))
elif cmd == "hostile":
    d = sys.argv[2]
    good = ("/w/a.c", "F", b"int a;\n")
    cases = {
        "name-dotdot": [("/w/../../../x", "F", b"x")],
        "name-relative": [("../../x", "F", b"x")],
        "link-abs-escape": [("/w/l", "L", "/../../../../etc")],
        "link-rel-escape": [("/w/l", "L", "../../../../../../tmp")],
        "through-link": [("/w/d", "L", sysdir_link("/w/d").replace("w/d", "tmp")),
                         ("/w/d/pwned", "F", b"x")],
        "link-then-file": [("/w/sys", "L", "/"), ("/w/sys/pwned", "F", b"x")],
    }
    for k, ents in cases.items():
        open(os.path.join(d, k + ".bin"), "wb").write(
            request("/w", ["gcc", "-c", "a.c", "-o", "a.o"], [good] + ents))
EOF
export HERE
p3() { $PYTHON "$P3PY" "$@"; }

# --- 1. captured pump requests -----------------------------------------
if [ -f "$VECTORS/p3-request.bin" ]; then
	gccver=$(gcc -dumpfullversion 2>/dev/null)
	for v in p3 p3-sysdeps p3-absinc p3-error; do
		$DCC replay "$DPORT" "$VECTORS/$v-request.bin" --out "$T/$v.bin" \
			--timeout 60 2>"$T/replay.txt"
		note "$v: $(cat "$T/replay.txt")"
		st=$(p3 split "$T/$v.bin" "$T/$v.o" "$T/$v.d")
		want=0; [ "$v" = p3-error ] && want=100
		check "$v: protocol-3 reply with STAT $want" test "$st" = "$want"
		if [ "$want" = 0 ]; then
			check "$v: DOTO is an ELF object" elf_object "$T/$v.o"
			check "$v: no daemon temp path in the object" \
				sh -c "! grep -Eq 'boltccd[._]' '$T/$v.o'"
			check "$v: DOTD names the client's paths" \
				sh -c "grep -q '^[a-z_]*\.o:' '$T/$v.d' && ! grep -Eq 'boltccd[._]' '$T/$v.d'"
		fi
		case $v in p3-error)
			# SERR quotes follow the daemon's locale (tests run in C)
			if same_file "$T/$v.bin" "$VECTORS/$v-reply.bin"; then
				note "$v: byte-identical to Debian distccd's reply"
			else
				note "$v: differs from the capture (compiler messages follow the daemon's locale)"
			fi ;;
		p3)
			if [ "$gccver" = 12.2.0 ]; then
				check "$v: reply byte-identical to Debian distccd's" \
					same_file "$T/$v.bin" "$VECTORS/$v-reply.bin"
			else
				note "$v: gcc $gccver, not the capture's 12.2.0: bytes not compared"
			fi ;;
		esac
	done
	if grep -q distccd_ "$VECTORS/p3-absinc-reply.bin"; then
		note "p3-absinc: Debian distccd's object leaks its temp dir; ours does not"
	fi
else
	note "captured vectors not found at $VECTORS: replay part not run"
fi

# --- 2. object identity with local compiles ----------------------------
P=$T/proj
mkdir -p "$P/src/inc" "$P/absinc"
cat >"$P/src/a.c" <<'EOF'
#include "h.h"
#include <abs.h>
#include <stdio.h>
int shown(void) { printf("%s:%d %d\n", __FILE__, __LINE__, H + ABS); return H; }
EOF
echo '#define H 3' >"$P/src/inc/h.h"
echo '#define ABS 4' >"$P/absinc/abs.h"
for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { note "no $cc"; continue; }
	for g in -g0 -g; do
		tag=$cc$g
		(cd "$P/src" && $cc $g -O1 -Iinc -I"$P/absinc" -c a.c -o "$T/$tag-local.o" \
			-MD -MF "$T/$tag-local.d" -MT a.o) || die "local $cc failed"
		$DCC build --proto 3 --cwd "$P/src" \
			--files "$P/src/a.c,$P/src/inc/h.h,$P/absinc/abs.h" -- \
			$cc $g -O1 -Iinc -I"$P/absinc" -c a.c -o a.o -MD \
			>"$T/$tag-req.bin"
		$DCC replay "$DPORT" "$T/$tag-req.bin" --out "$T/$tag-rep.bin" \
			--timeout 60 2>/dev/null
		st=$(p3 split "$T/$tag-rep.bin" "$T/$tag-remote.o" "$T/$tag-remote.d")
		check "$tag: pump compile succeeded" test "$st" = 0
		check "$tag: object byte-identical to the local compile" \
			same_file "$T/$tag-local.o" "$T/$tag-remote.o"
		check "$tag: .d has the same dependencies as the local one" \
			sh -c "tr -d '\\\\\n' <'$T/$tag-local.d' | tr -s ' ' >'$T/l.txt';
			       tr -d '\\\\\n' <'$T/$tag-remote.d' | tr -s ' ' >'$T/r.txt';
			       cmp -s '$T/l.txt' '$T/r.txt'"
	done
done

# --- 3. hostile trees ---------------------------------------------------
mkdir -p "$T/hostile"
p3 hostile "$T/hostile"
# where an escape would write: what is there now (a machine may have a
# /tmp/x of its own), to compare with afterwards
ESCAPES="/x /tmp/x /pwned /tmp/pwned /etc/pwned"
snap() { ls -ld --full-time $ESCAPES 2>/dev/null; ls -lA --full-time /tmp/x 2>/dev/null; }
snap >"$T/escapes.before"
for f in "$T"/hostile/*.bin; do
	k=$(basename "$f" .bin)
	$DCC replay "$DPORT" "$f" --out "$T/hostile/$k.rep" --timeout 30 2>/dev/null
	check "hostile $k: refused (no reply)" test ! -s "$T/hostile/$k.rep"
done
snap >"$T/escapes.after"
check "nothing written outside the job roots" \
	cmp -s "$T/escapes.before" "$T/escapes.after"
check "daemon log names the refusals" grep -q "escapes the root\|is a link or a file\|component" "$DLOG"
check "daemon still alive" alive "$DPID"
$DCC replay "$DPORT" "$T/gcc-g0-req.bin" --out "$T/after.bin" --timeout 60 2>/dev/null
st=$(p3 split "$T/after.bin" "$T/after.o" "$T/after.d")
check "daemon serves a good pump job after the hostile ones" test "$st" = 0
finish
