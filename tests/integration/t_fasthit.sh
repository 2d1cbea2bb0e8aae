#!/bin/sh
# t_fasthit.sh - cache hits answered by the daemon's parent, without a
# worker (daemon/fasthit.h; issue 20): a BOLT pump hit and a direct
# mode lookup hit are served there (hit_fast, the parent's pid in the log),
# counted once, with outputs identical to a local compile; a changed
# header or flag is never served a stale result; a damaged blob is not
# served by the parent but found out by a worker; eight identical hits
# at once stay correct; a client that does not read a large reply holds
# neither the parent nor the other clients, and is cut off after
# --io-timeout.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc python3
CT="python3 $(dirname "$0")/cachetool.py"

S=$T/src
mkdir -p "$S/inc" "$S/o" "$S/lo"
cat >"$S/m.c" <<'EOF'
#include "h.h"
int m(int a) { return a * H; }
EOF
echo '#define H 3' >"$S/inc/h.h"
# old enough for direct mode to record a manifest at once (client/direct.c)
touch -d '2020-01-01 00:00' "$S/m.c" "$S/inc/h.h"

start_boltccd --io-timeout 2 || die "boltccd did not start"
CDIR=$(new_client_dir)
hits() { $CT dstat "$DSPORT" hit_fast; }
# build MODE TAG FLAGS...: m.c through the farm (MODE: "" pump,
# ",plain" plain with direct mode) and locally, each to the same path
# every time, as a build does, then kept as o/TAG.o and lo/TAG.o
build() {
	_mode=$1; _tag=$2; shift 2
	(cd "$S" && gcc "$@" -Iinc -c m.c -o lo/m.o) &&
		mv "$S/lo/m.o" "$S/lo/$_tag.o" || return 1
	(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_LOCAL_CACHE_SIZE=0 \
		BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt$_mode" DISTCC_FALLBACK=0 \
		"$BOLTCC" gcc "$@" -Iinc -c m.c -o o/m.o) &&
		mv "$S/o/m.o" "$S/o/$_tag.o"
}
same() { cmp -s "$S/o/$1.o" "$S/lo/$1.o"; }

log "--- a BOLT pump hit: the parent serves it"
build "" p1 -O2 || die "first pump build"
h0=$(hits); c0=$($CT cstat "$DSPORT" hits)
build "" p2 -O2 || die "second pump build"
check "pump hit served by the parent (hit_fast $h0 -> $(hits))" [ "$(hits)" -eq $((h0 + 1)) ]
check "pump hit: object identical to local" same p2
check "pump hit: counted once by the cache ($c0 -> $($CT cstat "$DSPORT" hits))" \
	[ "$($CT cstat "$DSPORT" hits)" -eq $((c0 + 1)) ]
check "the log's hit line is the parent's (pid $DPID)" \
	grep -q "boltccd\[$DPID\] INFO: client: 127.0.0.1:[0-9]* cache hit [0-9a-f]* m.c" "$DLOG"
check "no worker started for it" \
	sh -c "[ \$(grep -c 'worker [0-9]* for' '$DLOG') -eq 1 ]"

log "--- a direct-mode lookup hit (plain mode): the parent serves it"
build ",plain" q1 -O1 || die "first plain build"
h0=$(hits)
build ",plain" q2 -O1 || die "second plain build"
check "lookup hit served by the parent (hit_fast $h0 -> $(hits))" [ "$(hits)" -eq $((h0 + 1)) ]
check "lookup hit: object identical to local" same q2
check "the client counted a direct-mode hit" \
	[ "$(client_stat "$CDIR" cache_hits_direct)" -eq 1 ]

log "--- nothing stale after a change"
echo '#define H 5' >"$S/inc/h.h"
touch -d '2020-01-02 00:00' "$S/inc/h.h"
h0=$(hits)
build "" p3 -O2 || die "pump build after the header changed"
check "changed header (pump): no hit ($h0 -> $(hits))" [ "$(hits)" -eq "$h0" ]
check "changed header (pump): the new local object" same p3
build ",plain" q4 -O1 || die "plain build after the header changed"
check "changed header (plain): no hit" [ "$(hits)" -eq "$h0" ]
check "changed header (plain): the new local object" same q4
build "" p4 -O2 -DEXTRA=1 || die "pump build with another flag"
check "another flag: no hit" [ "$(hits)" -eq "$h0" ]
check "another flag: its local object" same p4

log "--- a damaged blob is not the parent's to serve"
build "" p5 -O2 || die "pump build (hit)"
check "unchanged again: a hit" [ "$(hits)" -eq $((h0 + 1)) ]
for b in $(find "$T/cache-$DPORT/blobs" -type f); do
	python3 - "$b" <<'EOF'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
d[len(d) // 2] ^= 0x55
open(p, "wb").write(bytes(d))
EOF
done
h0=$(hits)
build "" p6 -O2 || die "pump build after the damage"
check "damaged blob: not served by the parent ($h0 -> $(hits))" [ "$(hits)" -eq "$h0" ]
check "damaged blob: the worker found it out" grep -q 'corrupt entry' "$DLOG"
check "damaged blob: the object is a fresh compile's, identical to local" same p6

log "--- eight identical hits at once"
build "" p7 -O2 || die "pump build (stored again)"
h0=$(hits)
pids=""
for i in 1 2 3 4 5 6 7 8; do
	(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_LOCAL_CACHE_SIZE=0 \
		BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt" DISTCC_FALLBACK=0 \
		"$BOLTCC" gcc -O2 -Iinc -c m.c -o "o/c$i.o") 2>"$T/c$i.err" &
	pids="$pids $!"
done
wait $pids
ok=0
for i in 1 2 3 4 5 6 7 8; do
	cmp -s "$S/o/c$i.o" "$S/lo/p7.o" && ok=$((ok + 1))
done
check "eight concurrent hits: $ok of 8 identical to local" [ "$ok" -eq 8 ]
check "eight concurrent hits: served by the parent ($h0 -> $(hits))" [ "$(hits)" -eq $((h0 + 8)) ]

log "--- a client that does not read a large reply"
python3 - "$S/big.c" <<'EOF'
import random, sys
r = random.Random(20)
with open(sys.argv[1], "w") as f:
    f.write("const unsigned char big[] = {\n")
    for i in range(3500000 // 32):
        f.write(",".join(str(r.randrange(256)) for _ in range(32)) + ",\n")
    f.write("};\n")
EOF
(cd "$S" && gcc -c big.c -o lo/big.o) || die "local big.c"
(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_LOCAL_CACHE_SIZE=0 \
	BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt,plain" DISTCC_FALLBACK=0 "$BOLTCC" gcc -c big.c -o o/big.o) || die "big.c through the farm"
check "big.c: identical to local" cmp -s "$S/o/big.o" "$S/lo/big.o"
BIGKEY=$(ls -t $(find "$T/cache-$DPORT/blobs" -type f) | head -n 1 | xargs basename)
note "big.c's key: $BIGKEY"
$CT bolt "$DPORT" lookup-noread "$BIGKEY" 6 >"$T/noread.out" 2>&1 &
NR=$!
wait_until 10 grep -q SENT "$T/noread.out" || die "lookup-noread did not start"
sleep 0.5
h0=$(hits)
t0=$(date +%s)
ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	build "" h$i -O2 && same h$i && ok=$((ok + 1))
done
t1=$(date +%s)
check "meanwhile, 10 other hits served ($ok of 10, $((t1 - t0)) s)" [ "$ok" -eq 10 ]
check "meanwhile, by the parent ($h0 -> $(hits))" [ "$(hits)" -ge $((h0 + 10)) ]
wait $NR
check "the silent client was cut off: $(cat "$T/noread.out" | tr '\n' ' ')" grep -q '^CUT' "$T/noread.out"
check "the log says why" grep -q 'reply cut off: I/O timeout (--io-timeout 2 s): no progress for 2000 ms while sending' "$DLOG"
ans=$($CT bolt "$DPORT" lookup "$BIGKEY")
check "a reading client gets the large hit ($ans)" [ "$ans" = STAT ]
rm -f "$S/o/big.o"
(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_LOCAL_CACHE_SIZE=0 \
	BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt" DISTCC_FALLBACK=0 \
	"$BOLTCC" gcc -c big.c -o o/big.o) || die "big.c again"
check "big.c again (pump): identical to local" cmp -s "$S/o/big.o" "$S/lo/big.o"
log "--- -o a device: written into, never replaced"
if mknod "$T/null" c 1 3 2>/dev/null; then
	for m in "" ",plain"; do
		(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt$m" \
			DISTCC_FALLBACK=0 "$BOLTCC" gcc -O2 -Iinc -c m.c -o "$T/null")
		check "-o a null device ($m): exit $?, still a character device" test -c "$T/null"
	done
else
	note "not root: no device of our own to write to"
fi
check "daemon alive" alive "$DPID"
finish
