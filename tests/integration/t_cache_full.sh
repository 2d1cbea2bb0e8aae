#!/bin/sh
# t_cache_full.sh - the cache directory's filesystem fills up (a small
# tmpfs this test mounts, root only): stores fail, compiles keep
# succeeding remotely with correct objects; once there is room again,
# results are stored and served.  The mount is removed at exit.
. "$(dirname "$0")/lib.sh"
# the farm's side is under test: this machine's local tier of the cache
# would answer repeated jobs before they reach it (t_hitcache.sh)
BOLTCC_LOCAL_CACHE_SIZE=0
export BOLTCC_LOCAL_CACHE_SIZE
need_binaries
need_tool gcc
[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs"
CT="$PYTHON $HERE/cachetool.py"
MNT="$T/mnt"
mkdir -p "$MNT"
mount -t tmpfs -o size=768k,mode=0700 tmpfs "$MNT" 2>"$T/mount.err" ||
	skip "cannot mount a tmpfs: $(cat "$T/mount.err")"
trap '_rc0=$?; umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null; (exit $_rc0); _cleanup' EXIT

start_boltccd --cache-dir "$MNT/cache" || die "cannot start boltccd"
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
BOLTCC_DIR=$(new_client_dir)
export BOLTCC_HOSTS BOLTCC_DIR
mkdir -p "$T/src"
cd "$T/src" || die "no src"
for i in 0 1 2 3 4 5; do
	cat >"f$i.c" <<EOF2
static const char big$i[] = "$(head -c 3000 /dev/zero | tr '\0' 'x')$i";
const char *get$i(void) { return big$i; }
int calc$i(int x) { return x * $i + (int)sizeof big$i; }
EOF2
	gcc -O2 -c "f$i.c" -o "f$i.local.o" || die "local compile"
done
cstat() { $CT cstat "$DSPORT" "$1" 2>/dev/null || echo -1; }
ok_count() { dstat "$DSPORT" dcc_compile_ok; }

DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c f0.c -o f0.o || fail "f0"
check "with room: stored (stores $(cstat stores))" [ "$(cstat stores)" -eq 1 ]

# Fill the filesystem.
dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null
avail=$(df -k "$MNT" | awk 'NR==2 {print $4}')
note "filesystem full: ${avail} KiB available"
okb=$(ok_count)
bad=0
for i in 1 2 3 4 5; do
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c "f$i.c" -o "f$i.o" 2>"$T/f$i.err" ||
		{ fail "disk full: boltcc f$i.c failed: $(head -c 300 "$T/f$i.err")"; continue; }
	cmp -s "f$i.local.o" "f$i.o" || bad=1
done
oka=$(ok_count)
check "disk full: compiles still done by the daemon ($okb -> $oka)" [ "$oka" -eq $((okb + 5)) ]
check "disk full: objects correct" [ $bad -eq 0 ]
check "disk full: nothing more stored (stores $(cstat stores))" [ "$(cstat stores)" -eq 1 ]
check "disk full: the daemon logged failed stores" grep -q "storing .* failed" "$DLOG"
check "daemon alive" alive "$DPID"

# Room again: stored, then served.
rm -f "$MNT/fill"
for i in 1 2 3; do
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c "f$i.c" -o "f$i.o" || fail "f$i again"
done
check "room again: stored ($(cstat stores))" [ "$(cstat stores)" -eq 4 ]
hb=$(cstat hits)
for i in 1 2 3; do
	rm -f "f$i.o"
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c "f$i.c" -o "f$i.o" || fail "f$i hit"
	cmp -s "f$i.local.o" "f$i.o" || bad=1
done
check "room again: served from the cache ($hb -> $(cstat hits))" [ "$(cstat hits)" -eq $((hb + 3)) ]
check "room again: objects correct" [ $bad -eq 0 ]
"$BOLTCCD" --cache-check --cache-dir "$MNT/cache" >"$T/check.txt"
check "index and files agree: $(cat "$T/check.txt")" grep -q ": consistent" "$T/check.txt"
finish
