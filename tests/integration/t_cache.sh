#!/bin/sh
# t_cache.sh - the daemons' shared artifact cache (doc/cache.md):
#   two clients with different working copies (default mode toward
#   boltccd: BOLT pump): the second build is all hits, objects
#   byte-identical to local compiles, warnings replayed, the .d written;
#   with -g the working directory splits the key; direct mode (plain
#   mode, ,plain); a stock distcc client gets hits too; identical jobs in
#   flight compile once; two daemons: the owner of a key knows where it
#   was compiled (LOCATE, LOCN; kept across a restart), a parallel build's
#   entries are all found, an owner that does not answer costs no job; a forged result, a manifest hash that does not
#   match the file or a wrong compiler identity is never served; a flipped
#   byte in a blob is caught (plain and pump entries); counters persist
#   across a restart; --stats, --stats --json, --zero-stats (the
#   client's; boltccd --zero-stats for a daemon's), /metrics.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
CT="$PYTHON $HERE/cachetool.py"
write_sources
start_boltccd || die "cannot start boltccd"
D1PORT=$DPORT D1SPORT=$DSPORT D1PID=$DPID D1CACHE="$T/cache-$DPORT"
cstat() { $CT cstat "$1" "$2" 2>/dev/null || echo -1; }
matches() { case "$1" in $2) return 0 ;; esac; return 1; }

# A small project in two working copies (different absolute paths).
mkdir -p "$T/proj"
cp "$T/src/hello.c" "$T/src/hello.h" "$T/src/warn.c" "$T/proj/"
for i in 1 2 3 4 5; do
	cat >"$T/proj/unit$i.c" <<EOF2
#include "hello.h"
static int table$i[] = { 1, 2, 3, $i };
int unit$i(int x) { return hello_answer(x) + table$i[x & 3] * HELLO_SCALE; }
EOF2
done
UNITS="hello warn unit1 unit2 unit3 unit4 unit5"
NUNITS=7
cp -r "$T/proj" "$T/wc1"
cp -r "$T/proj" "$T/wc2"

# build WC CLIENTDIR: every unit through boltcc (no fallback), -MD files,
# stderr kept per unit.
build() {
	_wc=$1; _cd=$2
	mkdir -p "$_wc/obj"
	for _u in $UNITS; do
		( cd "$_wc" && BOLTCC_DIR=$_cd DISTCC_FALLBACK=0 \
		  timeout 60 "$BOLTCC" gcc -O2 -Wall -MD -MF "obj/$_u.d" \
		  -c "$_u.c" -o "obj/$_u.o" 2>"obj/$_u.err" ) || return 1
	done
}

# local reference objects and .d files
mkdir -p "$T/proj/obj"
for u in $UNITS; do
	( cd "$T/proj" && gcc -O2 -Wall -MD -MF "obj/$u.d" -c "$u.c" \
	  -o "obj/$u.o" 2>"obj/$u.err" ) || die "local compile of $u"
done

log "--- two working copies, one daemon ($D1PORT)"
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt"
export BOLTCC_HOSTS
C1=$(new_client_dir); C2=$(new_client_dir)
check "first working copy builds" build "$T/wc1" "$C1"
st1=$(cstat $D1SPORT stores); h1=$(cstat $D1SPORT hits)
check "cold build stored every unit (stores $st1)" [ "$st1" -eq $NUNITS ]
check "cold build: no hits ($h1)" [ "$h1" -eq 0 ]
check "second working copy builds" build "$T/wc2" "$C2"
h2=$(cstat $D1SPORT hits); st2=$(cstat $D1SPORT stores)
check "second build is all hits (hits $h2)" [ "$h2" -eq $NUNITS ]
check "second build stored nothing new (stores $st2)" [ "$st2" -eq $NUNITS ]
BOLTCC_DIR=$C2 "$BOLTCC" --stats --json >"$T/c2.json"
ch=$(json_get "$T/c2.json" cache_hits)
check "client counts its hits (cache_hits $ch)" [ "$ch" = $NUNITS ]
jp=$(json_get "$T/c2.json" jobs_pump)
check "default mode toward boltccd is pump (jobs_pump $jp)" [ "$jp" = $NUNITS ]
same_all=0
for u in $UNITS; do
	same_file "$T/proj/obj/$u.o" "$T/wc2/obj/$u.o" || { same_all=1; note "$u.o differs"; }
	same_file "$T/proj/obj/$u.o" "$T/wc1/obj/$u.o" || { same_all=1; note "$u.o (wc1) differs"; }
done
check "objects from hits byte-identical to local compiles" [ $same_all -eq 0 ]
check "warnings replayed on a hit" grep -q "unused variable" "$T/wc2/obj/warn.err"
check "no other stderr on a hit" [ ! -s "$T/wc2/obj/hello.err" ]
sed "s|$T/proj/||g" "$T/proj/obj/hello.d" >"$T/l.d"
sed "s|$T/wc2/||g" "$T/wc2/obj/hello.d" >"$T/r.d"
check ".d file written on a hit (same as local)" same_file "$T/l.d" "$T/r.d"

log "--- -g: the working directory is in the key"
# build_g WC CLIENTDIR: as build, with -g, objects in objg/
build_g() {
	_wc=$1; _cd=$2
	mkdir -p "$_wc/objg"
	for _u in $UNITS; do
		( cd "$_wc" && BOLTCC_DIR=$_cd DISTCC_FALLBACK=0 		  timeout 60 "$BOLTCC" gcc -O2 -g -Wall -MD -MF "objg/$_u.d" 		  -c "$_u.c" -o "objg/$_u.o" 2>"objg/$_u.err" ) || return 1
	done
}
sb=$(cstat $D1SPORT stores); hb=$(cstat $D1SPORT hits)
check "-g: wc1 builds" build_g "$T/wc1" "$(new_client_dir)"
check "-g: wc2 builds" build_g "$T/wc2" "$(new_client_dir)"
sa=$(cstat $D1SPORT stores); ha=$(cstat $D1SPORT hits)
[ "$sa" -eq $((sb + 2 * NUNITS)) ] && [ "$ha" -eq "$hb" ]
check "-g: two working copies do not share ($sb -> $sa stores, $hb -> $ha hits)" [ $? -eq 0 ]
rm -rf "$T/wc2/objg"
CG=$(new_client_dir)
check "-g: wc2 rebuilds" build_g "$T/wc2" "$CG"
ha=$(cstat $D1SPORT hits)
check "-g: the same working copy again is all hits ($hb -> $ha)" [ "$ha" -eq $((hb + NUNITS)) ]
BOLTCC_DIR=$CG "$BOLTCC" --stats --json >"$T/cg.json"
check "-g: client counted pump hits ($(json_get "$T/cg.json" cache_hits))" [ "$(json_get "$T/cg.json" cache_hits)" = $NUNITS ]
mkdir -p "$T/wc2/lobjg"
same_all=0
for u in $UNITS; do
	( cd "$T/wc2" && gcc -O2 -g -Wall -c "$u.c" -o "lobjg/$u.o" 2>/dev/null )
	same_file "$T/wc2/lobjg/$u.o" "$T/wc2/objg/$u.o" || { same_all=1; note "$u.o (-g) differs"; }
done
check "-g: objects from hits byte-identical to local -g compiles" [ $same_all -eq 0 ]
check "-g: warnings replayed on a hit" grep -q "unused variable" "$T/wc2/objg/warn.err"

log "--- direct mode: an unchanged command skips the preprocessor"
# direct mode belongs to plain mode: ,plain
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt,plain"
cp -r "$T/proj" "$T/wc7"
rm -rf "$T/wc7/obj"
# files younger than 2 s are never recorded (mtime granularity)
find "$T/wc7" -type f -exec touch -d "2 hours ago" {} +
C7=$(new_client_dir)
check "wc7 first build (plain hits, manifests recorded)" build "$T/wc7" "$C7"
check "manifests written" [ -n "$(find "$C7/state/direct" -type f 2>/dev/null | head -n 1)" ]
rm -rf "$T/wc7/obj"
check "wc7 second build" build "$T/wc7" "$C7"
BOLTCC_DIR=$C7 "$BOLTCC" --stats --json >"$T/c7.json"
check "second build: all direct hits ($(json_get "$T/c7.json" cache_hits_direct))" [ "$(json_get "$T/c7.json" cache_hits_direct)" = $NUNITS ]
same_all=0
for u in $UNITS; do
	same_file "$T/proj/obj/$u.o" "$T/wc7/obj/$u.o" || { same_all=1; note "$u.o differs"; }
done
check "direct hits: objects identical to local" [ $same_all -eq 0 ]
check "direct hits: warnings replayed" grep -q "unused variable" "$T/wc7/obj/warn.err"
sed "s|$T/wc7/||g" "$T/wc7/obj/hello.d" >"$T/r7.d"
check "direct hits: .d written (same as local)" same_file "$T/l.d" "$T/r7.d"
# A header's content changes (its mtime looks old): preprocessed again.
sed -i 's/HELLO_SCALE 3/HELLO_SCALE 5/' "$T/wc7/hello.h"
touch -d "2 hours ago" "$T/wc7/hello.h"
rm -rf "$T/wc7/obj"
check "wc7 build after a header change" build "$T/wc7" "$C7"
mkdir -p "$T/wc7/lobj"
same_all=0
for u in $UNITS; do
	( cd "$T/wc7" && gcc -O2 -Wall -c "$u.c" -o "lobj/$u.o" 2>/dev/null )
	same_file "$T/wc7/lobj/$u.o" "$T/wc7/obj/$u.o" || { same_all=1; note "$u.o stale"; }
done
check "header change: no stale object" [ $same_all -eq 0 ]
BOLTCC_DIR=$C7 "$BOLTCC" --stats --json >"$T/c7.json"
check "header change: only warn.c (no hello.h) was a direct hit ($(json_get "$T/c7.json" cache_hits_direct))" [ "$(json_get "$T/c7.json" cache_hits_direct)" = $((NUNITS + 1)) ]
BOLTCC_DIR=$C7 BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt" BOLTCC_PUMP=0 DISTCC_FALLBACK=0 \
  "$BOLTCC" --stats --json >"$T/c7.json"
check "plain mode (,plain): no pump job ($(json_get "$T/c7.json" jobs_pump))" [ "$(json_get "$T/c7.json" jobs_pump)" = missing ]
# BOLTCC_PUMP=0 is plain mode too: a direct hit
rm -rf "$T/wc7/obj"; mkdir -p "$T/wc7/obj"
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt"
( cd "$T/wc7" && BOLTCC_DIR=$C7 BOLTCC_PUMP=0 DISTCC_FALLBACK=0 \
  "$BOLTCC" gcc -O2 -Wall -MD -MF obj/warn.d -c warn.c -o obj/warn.o ) 2>/dev/null
BOLTCC_DIR=$C7 "$BOLTCC" --stats --json >"$T/c7.json"
check "BOLTCC_PUMP=0: plain mode (direct hit $(json_get "$T/c7.json" cache_hits_direct))" [ "$(json_get "$T/c7.json" cache_hits_direct)" = $((NUNITS + 2)) ]

log "--- stock distcc client against boltccd"
if command -v distcc >/dev/null 2>&1; then
	hb=$(cstat $D1SPORT hits)
	for n in 1 2; do
		( cd "$T/proj" && DISTCC_DIR=$(new_client_dir) \
		  DISTCC_HOSTS="127.0.0.1:$D1PORT" DISTCC_FALLBACK=0 \
		  timeout 60 distcc gcc -O1 -c hello.c -o "obj/dist$n.o" ) ||
			fail "distcc compile $n"
	done
	ha=$(cstat $D1SPORT hits)
	( cd "$T/proj" && gcc -O1 -c hello.c -o obj/dist-local.o )
	check "distcc client: second compile is a hit ($hb -> $ha)" [ "$ha" -eq $((hb + 1)) ]
	check "distcc client: hit object identical" same_file "$T/proj/obj/dist-local.o" "$T/proj/obj/dist2.o"
else
	note "distcc not installed: stock client case skipped"
fi

log "--- identical jobs in flight compile once"
mkdir -p "$T/slow"
$PYTHON - "$T/slow/slow.c" <<'EOF2'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1500):
        f.write("int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d ^ (s >> 3); return s; }\n" % (i, i))
EOF2
sb=$(cstat $D1SPORT stores); hb=$(cstat $D1SPORT hits)
pids=""
for n in 1 2 3 4; do
	( cd "$T/slow" && BOLTCC_DIR=$(new_client_dir) DISTCC_FALLBACK=0 \
	  timeout 120 "$BOLTCC" gcc -O2 -c slow.c -o "slow$n.o" ) &
	pids="$pids $!"
done
rcs=0
for p in $pids; do wait "$p" || rcs=1; done
sa=$(cstat $D1SPORT stores); ha=$(cstat $D1SPORT hits)
check "4 identical jobs: all succeeded" [ $rcs -eq 0 ]
check "4 identical jobs: compiled and stored once (stores $sb -> $sa)" [ "$sa" -eq $((sb + 1)) ]
check "4 identical jobs: 3 hits ($hb -> $ha)" [ "$ha" -eq $((hb + 3)) ]
check "4 identical jobs: identical objects" sh -c "cmp -s '$T/slow/slow1.o' '$T/slow/slow2.o' && cmp -s '$T/slow/slow1.o' '$T/slow/slow4.o'"

log "--- a wrong compiler identity is refused"
IDENT=$($CT identity "$D1CACHE")
check "daemon memoized its compiler identity" [ ${#IDENT} -eq 64 ]
printf 'int forged(void) { return 42; }\n' >"$T/f.i"
sb=$(cstat $D1SPORT stores)
ans=$($CT bolt $D1PORT compile ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff "$T/f.i" -- gcc -O2 -c f.c -o f.o)
check "BOLT compile with another identity: refused ($ans)" sh -c "echo '$ans' | grep -q 'identity mismatch'"
check "identity mismatch counted" [ "$(cstat $D1SPORT identity_mismatch)" -ge 1 ]
check "nothing stored for it" [ "$(cstat $D1SPORT stores)" -eq "$sb" ]
ans=$($CT bolt $D1PORT compile "$IDENT" "$T/f.i" -- gcc -O2 -c f.c -o f.o)
check "the same job with the right identity compiles ($ans)" [ "$ans" = STAT ]
# A client whose gcc is another binary (a wrapper): refused, compiled
# locally, in plain mode (CMPI in the compile request) and in the default
# pump mode (CMPI in the pump request).
mkdir -p "$T/fakebin"
printf '#!/bin/sh\nexec /usr/bin/gcc "$@"\n' >"$T/fakebin/gcc"
chmod +x "$T/fakebin/gcc"
for fmode in plain pump; do
	if [ $fmode = plain ]; then
		BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt,plain"
	else
		BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt"
	fi
	mm=$(cstat $D1SPORT identity_mismatch); sb=$(cstat $D1SPORT stores)
	( cd "$T/proj" && PATH="$T/fakebin:$PATH" BOLTCC_DIR=$(new_client_dir) \
	  timeout 60 "$BOLTCC" gcc -O3 -c hello.c -o obj/fake-$fmode.o 2>"$T/fake.err" )
	rc=$?
	check "$fmode: client with another compiler: exit 0 via local fallback (rc $rc)" [ $rc -eq 0 ]
	check "$fmode: client with another compiler: daemon refused it" [ "$(cstat $D1SPORT identity_mismatch)" -eq $((mm + 1)) ]
	check "$fmode: client with another compiler: nothing stored" [ "$(cstat $D1SPORT stores)" -eq "$sb" ]
done
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt,plain"

log "--- a forged result is never served"
# A request that carries a compiled object of its own after the source:
# the daemon compiles what it received and ignores the rest; the object
# stored and served is its own.
printf 'int planted(void) { return 1; }\n' >"$T/proj/planted.c"
printf 'NOT AN OBJECT: planted by a hostile client\n' >"$T/junk.o"
( cd "$T/proj" && gcc -O2 -c planted.c -E >"$T/planted.i" && gcc -O2 -c planted.c -o obj/planted-local.o )
ans=$($CT bolt $D1PORT forged "$T/planted.i" "$T/junk.o" -- gcc -O2 -c planted.c -o obj/planted.o)
note "forged request answered: $ans"
KEY=$($CT key "$IDENT" - 0 "$T/planted.i" -- gcc -O2 -c planted.c -o obj/planted.o)
hb=$(cstat $D1SPORT hits)
( cd "$T/proj" && BOLTCC_DIR=$(new_client_dir) DISTCC_FALLBACK=0 \
  timeout 60 "$BOLTCC" gcc -O2 -c planted.c -o obj/planted.o ) || fail "boltcc planted.c"
check "the client's key matches doc/cache.md (lookup hit after the forged job)" [ "$(cstat $D1SPORT hits)" -eq $((hb + 1)) ]
check "served object is the daemon's compile, not the planted bytes" same_file "$T/proj/obj/planted-local.o" "$T/proj/obj/planted.o"
ans=$($CT bolt $D1PORT lookup "$KEY")
check "lookup by the documented key: hit ($ans)" [ "$ans" = STAT ]
log "--- lookups that cannot hit are answered by the daemon's parent"
NOKEY=$(printf 'not in any cache' | sha256sum | cut -c1-64)
fb=$($CT dstat $D1SPORT lookup_fast); ab=$($CT dstat $D1SPORT dcc_tcp_accept)
ans=$($CT bolt $D1PORT lookup "$NOKEY")
check "absent key: MISS ($ans)" [ "$ans" = MISS ]
check "absent key: answered without a worker (lookup_fast $fb -> $($CT dstat $D1SPORT lookup_fast))" [ "$($CT dstat $D1SPORT lookup_fast)" -eq $((fb + 1)) ]
hf=$($CT dstat $D1SPORT hit_fast)
ans=$($CT bolt $D1PORT lookup "$KEY")
[ "$ans" = STAT ] && [ "$($CT dstat $D1SPORT lookup_fast)" -eq $((fb + 1)) ] &&
	[ "$($CT dstat $D1SPORT hit_fast)" -eq $((hf + 1)) ]
check "present key: the parent serves the hit too ($ans, hit_fast $hf -> $($CT dstat $D1SPORT hit_fast), lookup_fast unchanged)" [ $? -eq 0 ]
# the parent reads a request whole before it looks (daemon/intake.h): a
# lookup sent in two parts is answered there too; two requests on one
# connection, or trailing bytes, go to a worker
ans=$($CT bolt $D1PORT lookup-split "$NOKEY")
check "a lookup sent in two parts is answered by the parent ($ans)" \
	test "$ans" = MISS -a "$($CT dstat $D1SPORT lookup_fast)" -eq $((fb + 2))
for m in lookup-twice lookup-trail; do
	ans=$($CT bolt $D1PORT $m "$NOKEY")
	note "$m: $ans"
	check "$m: left to a worker (lookup_fast unchanged)" [ "$($CT dstat $D1SPORT lookup_fast)" -eq $((fb + 2)) ]
done
ans=$($CT bolt $D1PORT lookup-split "$NOKEY")
check "a lookup sent in two parts is still answered ($ans)" [ "$ans" = MISS ]
ans=$($CT bolt $D1PORT lookup "$NOKEY")
check "the daemon still serves after them ($ans)" [ "$ans" = MISS ]
check "every connection was counted (dcc_tcp_accept $ab -> $($CT dstat $D1SPORT dcc_tcp_accept))" [ "$($CT dstat $D1SPORT dcc_tcp_accept)" -eq $((ab + 7)) ]
ans=$($CT bolt $D1PORT store "$KEY" "$T/junk.o")
check "there is no store request (answered: $ans)" sh -c "echo '$ans' | grep -q 'EROR\|CLOSED'"

log "--- pump: a manifest hash that does not match the file is never served"
mkdir -p "$T/pf"
printf 'int pf(void) { return 1; }\n' >"$T/pf/pf.c"
( cd "$T/pf" && gcc -O2 -c pf.c -o pf-local.o )
BOGUS=$(printf 'int pf(void) { return 2; }\n' | sha256sum | cut -c1-64)
sb=$(cstat $D1SPORT stores); hb=$(cstat $D1SPORT hits)
ans=$($CT bolt $D1PORT pump "$T/pf" pf.c "$BOGUS" -- gcc -O2 -c pf.c -o pf.o)
check "file contradicting its manifest hash: refused ($ans)" matches "$ans" "NEED1 EROR*do not match*"
check "nothing stored for it" [ "$(cstat $D1SPORT stores)" -eq "$sb" ]
ans=$($CT bolt $D1PORT pump "$T/pf" pf.c "$BOGUS" -- gcc -O2 -c pf.c -o pf.o)
check "the same claim again: still asked for the file, no hit ($ans)" matches "$ans" "NEED1 EROR*"
check "no hit from a mismatched hash" [ "$(cstat $D1SPORT hits)" -eq "$hb" ]
ans=$($CT bolt $D1PORT pump "$T/pf" pf.c - -- gcc -O2 -c pf.c -o pf.o)
check "the true hash: compiled ($ans)" [ "$ans" = "NEED1 STAT" ]
ans=$($CT bolt $D1PORT pump "$T/pf" pf.c - -- gcc -O2 -c pf.c -o pf2.o)
check "then a hit right after the manifest, marked (no NEED round trip: $ans)" [ "$ans" = "NEED0 CHIT STAT" ]
check "stored once" [ "$(cstat $D1SPORT stores)" -eq $((sb + 1)) ]
PKEY=$($CT pumpkey "$IDENT" "$T/pf" pf.c -- gcc -O2 -c pf.c -o pf.o)
check "stored under the pump key doc/cache.md describes (${PKEY%"${PKEY#????????????????}"})" [ -n "$(find "$D1CACHE/blobs" -type f -name "$PKEY")" ]
PBLOB=$(find "$D1CACHE/blobs" -type f -name "$PKEY")
$PYTHON - "$PBLOB" <<'EOF2'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) - 5] ^= 0x08
open(p, "wb").write(b)
EOF2
cb=$(cstat $D1SPORT corrupt)
ans=$($CT bolt $D1PORT pump "$T/pf" pf.c - -- gcc -O2 -c pf.c -o pf.o)
check "pump entry with a flipped byte: a miss, compiled again ($ans)" [ "$ans" = "NEED0 STAT" ]
check "corrupt pump blob counted" [ "$(cstat $D1SPORT corrupt)" -eq $((cb + 1)) ]
hb=$(cstat $D1SPORT hits)
for n in 1 2; do
	rm -f "$T/pf/pf.o"
	( cd "$T/pf" && BOLTCC_DIR=$(new_client_dir) BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt" \
	  DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c pf.c -o pf.o ) || fail "boltcc pf.c"
done
check "boltcc: second pump compile is a hit ($hb -> $(cstat $D1SPORT hits))" [ "$(cstat $D1SPORT hits)" -eq $((hb + 1)) ]
check "pump hit object identical to local" same_file "$T/pf/pf-local.o" "$T/pf/pf.o"
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt,plain"

log "--- a flipped byte in a blob is caught"
BLOB=$(find "$D1CACHE/blobs" -type f -name "$KEY")
check "blob of the planted job exists" [ -f "$BLOB" ]
$PYTHON - "$BLOB" <<'EOF2'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) - 7] ^= 0x20
open(p, "wb").write(b)
EOF2
cb=$(cstat $D1SPORT corrupt); sb=$(cstat $D1SPORT stores)
rm -f "$T/proj/obj/planted.o"
( cd "$T/proj" && BOLTCC_DIR=$(new_client_dir) DISTCC_FALLBACK=0 \
  timeout 60 "$BOLTCC" gcc -O2 -c planted.c -o obj/planted.o ) || fail "boltcc after flip"
check "corrupt blob counted ($cb -> $(cstat $D1SPORT corrupt))" [ "$(cstat $D1SPORT corrupt)" -eq $((cb + 1)) ]
check "recompiled and stored again" [ "$(cstat $D1SPORT stores)" -eq $((sb + 1)) ]
check "object after the flip is still correct" same_file "$T/proj/obj/planted-local.o" "$T/proj/obj/planted.o"

log "--- two daemons: the key's owner knows where it was compiled"
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt"
start_boltccd || die "cannot start second boltccd"
D2PORT=$DPORT D2SPORT=$DSPORT D2PID=$DPID D2CACHE="$T/cache-$DPORT"
dsum() { echo $(( $(cstat $D1SPORT "$1") + $(cstat $D2SPORT "$1") )); }
# By hand: LOCATE at daemon 1 (as the owner) of a key nobody has.
LK=$(printf 'located key' | sha256sum | cut -c1-64)
D2NAME="127.0.0.1:$D2PORT"
fb=$($CT dstat $D1SPORT lookup_fast)
ans=$($CT bolt $D1PORT locate "$LK" 0 "$D2NAME")
check "LOCATE of an unknown key: MISS, the client's host recorded ($ans)" [ "$ans" = MISS ]
ans=$($CT bolt $D1PORT locate "$LK" 0 "")
check "the next client is sent there ($ans)" [ "$ans" = "LOCN $D2NAME" ]
ans=$($CT bolt $D1PORT locate "$LK" 0 "$D2NAME")
check "a client that would compile there is sent there too ($ans)" [ "$ans" = "LOCN $D2NAME" ]
check "answered by the parent (lookup_fast $fb -> $($CT dstat $D1SPORT lookup_fast))" [ "$($CT dstat $D1SPORT lookup_fast)" -eq $((fb + 3)) ]
ans=$($CT bolt $D1PORT locate "$LK" 1 "10.9.9.9:1")
check "REPLACE after a location that missed: MISS ($ans)" [ "$ans" = MISS ]
ans=$($CT bolt $D1PORT locate-split "$LK" 0 "")
check "a LOCATE a worker reads (sent in two parts) sees the new location ($ans)" [ "$ans" = "LOCN 10.9.9.9:1" ]
ans=$($CT bolt $D1PORT locate-split "$LK" 1 "$D2NAME")
check "a worker records a location too ($ans)" [ "$ans" = MISS ]
sleep 0.2
ans=$($CT bolt $D1PORT locate "$LK" 0 "")
check "... and the parent knows it ($ans)" [ "$ans" = "LOCN $D2NAME" ]
ans=$($CT bolt $D1PORT locate "$LK" 0 "$(head -c 300 /dev/zero | tr '\0' h)")
check "a host name over 255 bytes is refused ($ans)" sh -c "echo '$ans' | grep -q 'EROR\|CLOSED'"
ans=$($CT bolt $D1PORT lookup "$LK")
check "a plain LOOKUP still misses ($ans)" [ "$ans" = MISS ]

cp -r "$T/proj" "$T/wc3"; cp -r "$T/proj" "$T/wc4"; cp -r "$T/proj" "$T/wc5"
rm -rf "$T/wc3/obj" "$T/wc4/obj" "$T/wc5/obj"
# new units, so nothing is in either cache yet
for d in wc3 wc4 wc5; do
	for u in $UNITS; do sed -i "1i /* two-daemon case */" "$T/$d/$u.c"; done
	sed -i "1i /* two-daemon case */" "$T/$d/hello.h"
done
cp -r "$T/wc5" "$T/wc8"
# Both daemons, one slot each, a parallel build: some units compile on
# the host that does not own them, and their owner records where.
BOLTCC_HOSTS="127.0.0.1:$D1PORT/1,bolt 127.0.0.1:$D2PORT/1,bolt"; export BOLTCC_HOSTS
m0=$(dsum misses); s0=$(dsum stores); h0=$(dsum hits)
C3=$(new_client_dir)
( cd "$T/wc3" && mkdir -p obj && for u in $UNITS; do
	BOLTCC_DIR=$C3 DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -Wall -c "$u.c" -o "obj/$u.o" &
  done; wait )
n=0; for u in $UNITS; do [ -s "$T/wc3/obj/$u.o" ] && n=$((n + 1)); done
check "wc3 built in parallel on both daemons ($n objects)" [ $n -eq $NUNITS ]
[ $(( $(dsum misses) - m0 )) -eq $NUNITS ] && [ $(( $(dsum stores) - s0 )) -eq $NUNITS ]
check "wc3: one miss and one store per unit on the farm ($(( $(dsum misses) - m0 )) misses, $(( $(dsum stores) - s0 )) stores)" [ $? -eq 0 ]
note "units per daemon: $(cstat $D1SPORT stores) / $(cstat $D2SPORT stores) stores in all"
h0=$(dsum hits); s0=$(dsum stores); fb=$(( $($CT dstat $D1SPORT lookup_fast) + $($CT dstat $D2SPORT lookup_fast) ))
( cd "$T/wc4" && mkdir -p obj && for u in $UNITS; do
	BOLTCC_DIR=$(new_client_dir) DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -Wall -c "$u.c" -o "obj/$u.o" || echo "FAIL $u"
  done ) >"$T/wc4.out"
check "wc4 built" [ ! -s "$T/wc4.out" ]
check "wc4: every unit a hit, wherever it was compiled ($(( $(dsum hits) - h0 )) hits)" [ $(( $(dsum hits) - h0 )) -eq $NUNITS ]
check "wc4: nothing compiled again" [ "$(dsum stores)" -eq "$s0" ]
same_all=0
for u in $UNITS; do cmp -s "$T/wc3/obj/$u.o" "$T/wc4/obj/$u.o" || same_all=1; done
check "wc4: objects identical to wc3's" [ $same_all -eq 0 ]
# A host added to the list later: keys it now owns were compiled before
# it knew; they are compiled once more and recorded, then found.
for u in $UNITS; do sed -i "1i /* added host */" "$T/wc8/$u.c"; done
sed -i "1i /* added host */" "$T/wc8/hello.h"
cp -r "$T/wc8" "$T/wc9"; cp -r "$T/wc8" "$T/wc10"
BOLTCC_HOSTS="127.0.0.1:$D2PORT,bolt"; export BOLTCC_HOSTS
check "wc8 built on daemon 2 only" build "$T/wc8" "$(new_client_dir)"
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt 127.0.0.1:$D2PORT,bolt"; export BOLTCC_HOSTS
h0=$(dsum hits); s0=$(dsum stores)
check "wc9 built with daemon 1 added" build "$T/wc9" "$(new_client_dir)"
check "wc9: each unit either a hit or compiled once ($(( $(dsum hits) - h0 )) hits, $(( $(dsum stores) - s0 )) stores)" [ $(( $(dsum hits) - h0 + $(dsum stores) - s0 )) -eq $NUNITS ]
h0=$(dsum hits); s0=$(dsum stores)
check "wc10 built" build "$T/wc10" "$(new_client_dir)"
[ $(( $(dsum hits) - h0 )) -eq $NUNITS ] && [ "$(dsum stores)" -eq "$s0" ]
check "wc10: all hits ($(( $(dsum hits) - h0 )))" [ $? -eq 0 ]
# An owner that does not answer: the client asks every host.
kill -STOP "$D1PID"
h0=$(dsum hits)
( cd "$T/wc5" && mkdir -p obj && for u in $UNITS; do
	BOLTCC_DIR=$(new_client_dir) DISTCC_FALLBACK=0 DISTCC_IO_TIMEOUT=2 timeout 60 "$BOLTCC" gcc -O2 -Wall -c "$u.c" -o "obj/$u.o" || echo "FAIL $u"
  done ) >"$T/wc5.out" 2>&1
kill -CONT "$D1PID"
note "wc5 with daemon 1 stopped: $(cat "$T/wc5.out" | head -3)"
n=0; for u in $UNITS; do [ -s "$T/wc5/obj/$u.o" ] && n=$((n + 1)); done
check "wc5 with daemon 1 stopped: every object built ($n)" [ $n -eq $NUNITS ]
# Locations survive a restart (the keeper writes them to the index).
ans=$($CT bolt $D1PORT locate "$LK" 0 "")
kill -TERM "$D1PID"
i=0; while alive "$D1PID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
start_boltccd --cache-dir "$D1CACHE" || die "restart daemon 1"
D1PORT=$DPORT D1SPORT=$DSPORT D1PID=$DPID
ans2=$($CT bolt $D1PORT locate "$LK" 0 "")
[ "$ans2" = "$ans" ] && [ "$ans" = "LOCN $D2NAME" ]
check "a location survives a restart ($ans -> $ans2)" [ $? -eq 0 ]

log "--- statistics"
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt"; export BOLTCC_HOSTS
( cd "$T/src" && BOLTCC_DIR=$(new_client_dir) DISTCC_FALLBACK=0 DISTCC_SKIP_LOCAL_RETRY=1 \
  "$BOLTCC" gcc -c broken.c -o broken.o ) 2>/dev/null
check "a compile error is uncacheable (counted by reason)" [ "$(cstat $D1SPORT uncacheable)" -ge 1 ]
SC=$(new_client_dir)
( cd "$T/wc2" && BOLTCC_DIR=$SC DISTCC_FALLBACK=0 "$BOLTCC" gcc -O2 -Wall -MD -MF obj/hello.d -c hello.c -o obj/hello.o ) 2>/dev/null
BOLTCC_DIR=$SC BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt 127.0.0.1:$D2PORT,bolt" "$BOLTCC" --stats -v >"$T/stats.txt"
check "--stats shows the cache table" grep -q "hit rate" "$T/stats.txt"
check "--stats has a row per host" sh -c "grep -c '^  127.0.0.1:' '$T/stats.txt' | grep -q '^[2-9]'"
check "--stats shows the client's hits" grep -Eq "^  Hits: +1 " "$T/stats.txt"
check "--stats -v shows the raw counters" grep -q "cache_hits *1" "$T/stats.txt"
BOLTCC_DIR=$SC BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt 127.0.0.1:$D2PORT,bolt" "$BOLTCC" --stats --json >"$T/stats.json"
check "--stats --json has host cache counters" sh -c "$PYTHON -c 'import json,sys; d=json.load(open(\"$T/stats.json\")); assert d[\"hosts\"][0][\"cache\"][\"hits\"] > 0; assert \"entries\" in d[\"hosts\"][1][\"cache\"]'"
$DCC http $D1SPORT /metrics >"$T/metrics.txt" 2>/dev/null
check "/metrics carries cache counters" grep -q "^boltccd_cache_hits_total [1-9]" "$T/metrics.txt"
check "/metrics: uncacheable by reason" grep -q 'boltccd_cache_uncacheable_total{reason=' "$T/metrics.txt"
check "/stats.json: time saved" [ "$(cstat $D1SPORT time_saved_ms)" -gt 0 ]
# counters persist across a restart
hb=$(cstat $D1SPORT hits)
kill -TERM "$D1PID"
i=0; while alive "$D1PID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
start_boltccd --cache-dir "$D1CACHE" || die "restart"
D1PORT=$DPORT D1SPORT=$DSPORT
check "counters persist across a restart (hits $hb -> $(cstat $D1SPORT hits))" [ "$(cstat $D1SPORT hits)" -eq "$hb" ]
BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt"; export BOLTCC_HOSTS
build "$T/wc1" "$(new_client_dir)"
check "entries survive a restart (all hits)" [ "$(cstat $D1SPORT hits)" -eq $((hb + NUNITS)) ]
BOLTCC_DIR=$SC BOLTCC_HOSTS="127.0.0.1:$D1PORT,bolt 127.0.0.1:$D2PORT,bolt" "$BOLTCC" --zero-stats
rc=$?
check "--zero-stats exits 0 ($rc)" [ $rc -eq 0 ]
check "boltcc --zero-stats leaves daemon 1's counters (an operator's)" [ "$(cstat $D1SPORT hits)" -eq $((hb + NUNITS)) ]
check "boltcc --zero-stats leaves daemon 2's counters" [ "$(cstat $D2SPORT requests)" -gt 0 ]
"$BOLTCCD" --stats-port "$D1SPORT" --zero-stats >/dev/null
check "boltccd --zero-stats zeroed daemon 1's pages" [ "$(cstat $D1SPORT hits)" -eq 0 ]
check "... and kept the entries" [ "$(cstat $D1SPORT entries)" -gt 0 ]
BOLTCC_DIR=$SC "$BOLTCC" --stats --json >"$T/stats2.json"
check "--zero-stats reset the client" [ "$(json_get "$T/stats2.json" cache_hits)" = missing ]
"$BOLTCCD" --cache-check --cache-dir "$D1CACHE" >"$T/check.txt"
check "--cache-check: consistent ($(cat "$T/check.txt"))" grep -q "consistent" "$T/check.txt"
log "--- the cache keeper stopped: stats pages still answer, stores are not lost"
start_boltccd --cache-dir "$T/kcache" || die "cannot start boltccd (keeper test)"
KPORT=$DPORT KSPORT=$DSPORT KDPID=$DPID
# the daemon's one long-lived child is the keeper: wait until it is the
# only one (a worker for start_boltccd's readiness probe may linger)
children_of() {
	_want=$1
	for st in /proc/[0-9]*/stat; do
		set -- $(sed 's/^.*) //' "$st" 2>/dev/null)
		[ "${2:-}" = "$_want" ] && { _p=${st#/proc/}; echo "${_p%/stat}"; }
	done
}
kpid="" i=0
while [ $i -lt 50 ]; do
	kids=$(children_of "$KDPID")
	[ "$(echo "$kids" | grep -c .)" -eq 1 ] && { kpid=$kids; break; }
	sleep 0.1; i=$((i + 1))
done
check "found the cache keeper (pid ${kpid:-none})" [ -n "$kpid" ]
if [ -n "$kpid" ]; then
	kill -STOP "$kpid"
	s0=$(cstat $KSPORT stores)
	cp -r "$T/proj" "$T/wck" && rm -rf "$T/wck/obj"
	BOLTCC_HOSTS="127.0.0.1:$KPORT,bolt" build "$T/wck" "$(new_client_dir)"
	_rc=$?
	check "jobs succeed while the keeper is stopped (rc $_rc)" [ $_rc -eq 0 ]
	t0=$($PYTHON -c 'import time; print(int(time.time() * 1000))')
	s1=$(cstat $KSPORT stores)
	t1=$($PYTHON -c 'import time; print(int(time.time() * 1000))')
	note "stats page in $((t1 - t0)) ms with the keeper stopped (stores $s0 -> $s1)"
	# cstat gives -1 when the page does not come (5 s socket timeout)
	check "the stats page answered while the keeper is stopped ($s1)" [ "$s1" -ge 0 ]
	kill -CONT "$kpid"
	s2=$(cstat $KSPORT stores)
	check "every store counted once the keeper runs ($s0 -> $s2, $NUNITS units)" [ "$s2" -eq $((s0 + NUNITS)) ]
	check "its rows are in the index (entries $(cstat $KSPORT entries))" [ "$(cstat $KSPORT entries)" -eq "$NUNITS" ]
fi
kill -TERM "$KDPID"
i=0; while alive "$KDPID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$BOLTCCD" --cache-check --cache-dir "$T/kcache" >"$T/kcheck.txt"
check "keeper test: the cache is consistent after a stop ($(cat "$T/kcheck.txt"))" grep -q "consistent" "$T/kcheck.txt"
finish
