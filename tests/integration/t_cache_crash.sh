#!/bin/sh
# t_cache_crash.sh - boltccd and its workers are killed with SIGKILL 100
# times while they compile and store (a new translation unit every round,
# a cache small enough to evict).  Every object boltcc produced equals
# the local compile (nothing corrupt is ever served); after a restart the
# index and the blob files agree (boltccd --cache-check), and what is in
# the cache is served correctly.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
CT="$PYTHON $HERE/cachetool.py"
mkdir -p "$T/work"
CACHE="$T/cache"

t0=$(date +%s)
$CT crashloop "$BOLTCCD" "$BOLTCC" "$CACHE" "$T/work" 100 170 >"$T/loop.out" 2>"$T/loop.err"
rc=$?
t1=$(date +%s)
cat "$T/loop.out"
head -n 5 "$T/loop.err"
set -- $(cat "$T/loop.out")
rounds=${2:-0} served=${4:-0} bad=${6:--1}
check "crash loop ran (rc $rc)" [ $rc -eq 0 ]
check "100 SIGKILL rounds in $((t1 - t0)) s" [ "$rounds" -eq 100 ]
check "boltcc produced objects during the rounds ($served)" [ "$served" -gt 0 ]
check "no object differed from the local compile ($bad)" [ "$bad" -eq 0 ]

"$BOLTCCD" --cache-check --cache-dir "$CACHE" >"$T/before.txt"
note "before restart: $(cat "$T/before.txt")"

# A restart reconciles index and files.
start_boltccd --cache-dir "$CACHE" --cache-size 100K || die "restart"
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
BOLTCC_DIR=$(new_client_dir)
export BOLTCC_HOSTS BOLTCC_DIR
cd "$T/work" || die "no work dir"
diff=0 n=0
for src in u*.c; do
	o=${src%.c}
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -c "$src" -o "$o.final.o" ||
		{ fail "boltcc $src after the crashes"; continue; }
	cmp -s "$o.local.o" "$o.final.o" || { diff=$((diff + 1)); note "$src differs"; }
	n=$((n + 1))
done
check "after restart: $n objects, all identical to local compiles" [ $diff -eq 0 ]
check "after restart: some were cache hits ($($CT cstat "$DSPORT" hits))" [ "$($CT cstat "$DSPORT" hits)" -gt 0 ]
check "no corrupt blob was found on read ($($CT cstat "$DSPORT" corrupt))" [ "$($CT cstat "$DSPORT" corrupt)" -eq 0 ]
kill -TERM "$DPID"
i=0; while alive "$DPID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$BOLTCCD" --cache-check --cache-dir "$CACHE" --cache-size 100K >"$T/after.txt"
rc=$?
check "index and files agree after restart: $(cat "$T/after.txt")" [ $rc -eq 0 ]
finish
