#!/bin/sh
# t_cacheadm.sh - cache administration and the farm's counters
# (doc/cache.md, "Administration"), real boltccd on 127.0.0.1:
#   boltcc --cache shows each daemon's entries and bytes; limit shrinks
#   the cache to it and outlives a restart (over --cache-size);
#   evict-older-than removes the old entries only; clear empties it (the
#   next compile is a miss, then a hit); GET /admin/... changes nothing;
#   boltcc --zero-stats zeroes the client's counters and not the farm's;
#   boltccd --zero-stats zeroes /stats.json while /metrics never goes
#   backwards; SIGKILL during a clear of many entries (while clients
#   compile) leaves a cache that reconciles and passes --cache-check,
#   and no object differs from a local compile; from an address that is
#   neither loopback nor --admin-allow (a network namespace pair this
#   test creates; skipped without `ip netns`) admin requests and the
#   BOLT zero request are refused, naming the reason.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc curl
CT="$PYTHON $HERE/cachetool.py"
cstat() { $CT cstat "$1" "$2" 2>/dev/null || echo -1; }
# jq FILE EXPR: a value from a JSON file (python expression over d)
jq() {
	$PYTHON - "$1" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(eval(sys.argv[2]))
except Exception as e:
    print("error: %s" % e)
EOF
}
# metric PORT NAME: a value from /metrics
metric() {
	curl -s "http://127.0.0.1:$1/metrics" | sed -n "s/^$2 //p" | head -n 1
}
post() { curl -s -X POST "http://127.0.0.1:$1$2"; }

# NUNITS translation units, each its own cache entry
NUNITS=8
mkdir -p "$T/proj"
for i in $(seq 1 $NUNITS); do
	cat >"$T/proj/u$i.c" <<EOF2
static int table$i[] = { 1, 2, 3, $i };
int unit$i(int x) { int s = 0; for (int k = 0; k < x; k++) s += table$i[k & 3] * $i; return s; }
EOF2
	( cd "$T/proj" && gcc -O2 -c "u$i.c" -o "u$i.local.o" ) || die "local compile"
done
# build: every unit through boltcc (no fallback, no local tier)
build() {
	for _i in $(seq 1 $NUNITS); do
		( cd "$T/proj" && DISTCC_FALLBACK=0 BOLTCC_LOCAL_CACHE_SIZE=0 \
		  timeout 60 "$BOLTCC" gcc -O2 -c "u$_i.c" -o "u$_i.o" ) || return 1
		cmp -s "$T/proj/u$_i.o" "$T/proj/u$_i.local.o" || return 1
	done
}
one() {	# one unit: $1
	( cd "$T/proj" && DISTCC_FALLBACK=0 BOLTCC_LOCAL_CACHE_SIZE=0 \
	  timeout 60 "$BOLTCC" gcc -O2 -c "u$1.c" -o "u$1.o" ) &&
	cmp -s "$T/proj/u$1.o" "$T/proj/u$1.local.o"
}
show() { "$BOLTCC" --cache --json >"$T/show.json" 2>"$T/show.err"; }

start_boltccd --cache-dir "$T/cache" || die "cannot start boltccd"
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
BOLTCC_DIR=$(new_client_dir)
export BOLTCC_HOSTS BOLTCC_DIR

log "--- boltcc --cache shows the farm's cache"
check "build of $NUNITS units" build
check "boltcc --cache --json" show
check "entries: $(jq "$T/show.json" "d['hosts'][0]['cache']['entries']")" \
	[ "$(jq "$T/show.json" "d['hosts'][0]['cache']['entries']")" = $NUNITS ]
bytes=$(jq "$T/show.json" "d['hosts'][0]['cache']['stored_bytes']")
check "stored bytes: $bytes" [ "$bytes" -gt 0 ]
check "limit shown: default 4G" [ "$(jq "$T/show.json" "d['hosts'][0]['cache']['limit_bytes']")" = 4294967296 ]
check "local tier shown" [ "$(jq "$T/show.json" "d['local']['ok']")" = True ]
"$BOLTCC" --cache >"$T/show.txt" 2>&1
check "text table names the host" grep -q "^127.0.0.1:$DPORT,bolt  *$NUNITS " "$T/show.txt"

log "--- GET /admin/... changes nothing"
code=$(curl -s -o "$T/get.out" -w '%{http_code}' "http://127.0.0.1:$DSPORT/admin/cache/clear")
check "GET /admin/cache/clear: 405 ($code)" [ "$code" = 405 ]
check "405 says why" grep -q "POST" "$T/get.out"
check "the entries are still there" [ "$(cstat $DSPORT entries)" = $NUNITS ]
code=$(curl -s -o "$T/bad.out" -w '%{http_code}' -X POST "http://127.0.0.1:$DSPORT/admin/cache/limit?size=lots")
check "a bad size: 400 naming the parameter ($(cat "$T/bad.out"))" sh -c "[ $code = 400 ] && grep -q 'parameter size' '$T/bad.out'"

log "--- limit: evicts down to it, outlives a restart"
per=$((bytes / NUNITS))
lim=$((per * 3 + per / 2))
"$BOLTCC" --cache limit "$lim" >"$T/limit.out" 2>&1
check "boltcc --cache limit $lim: $(cat "$T/limit.out")" grep -q '"limit_bytes":'"$lim" "$T/limit.out"
n=$(cstat $DSPORT entries); b=$(cstat $DSPORT stored_bytes)
check "shrunk to the limit: $n entries, $b bytes" sh -c "[ $n -le 3 ] && [ $b -le $lim ] && [ $n -gt 0 ]"
kill -TERM "$DPID"; i=0; while alive "$DPID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
start_boltccd --cache-dir "$T/cache" --cache-size 1G || die "restart"
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
check "restart: the operator's limit overrides --cache-size 1G" [ "$(cstat $DSPORT limit_bytes)" = "$lim" ]
check "restart: the log says so" grep -q "set by an operator" "$DLOG"
check "build after the restart" build
check "stores beyond the limit evict to it ($(cstat $DSPORT stored_bytes) <= $lim)" [ "$(cstat $DSPORT stored_bytes)" -le "$lim" ]
check "boltccd --cache-admin limit 0 forgets it" sh -c "'$BOLTCCD' --stats-port $DSPORT --cache-admin limit 0 | grep -q '\"limit_set\":false'"
check "the limit is --cache-size again" [ "$(cstat $DSPORT limit_bytes)" = 1073741824 ]

log "--- evict-older-than: the old entries only"
check "refill" build
check "all $NUNITS entries back ($(cstat $DSPORT entries))" [ "$(cstat $DSPORT entries)" = $NUNITS ]
# age three entries: their last use 10 days ago, in the index
$PYTHON - "$T/cache/index.sqlite" <<'EOF'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=10)
keys = [r[0] for r in db.execute("SELECT key FROM entries ORDER BY key LIMIT 3")]
db.executemany("UPDATE entries SET last_used=? WHERE key=?",
               [(int(time.time()) - 10 * 86400, k) for k in keys])
db.commit()
open(sys.argv[1] + ".aged", "w").write("\n".join(keys) + "\n")
EOF
"$BOLTCC" --cache evict-older-than 7d >"$T/evict.out" 2>&1
check "evict-older-than 7d: $(cat "$T/evict.out")" grep -q '"evicted_entries":3,' "$T/evict.out"
check "the others stay ($(cstat $DSPORT entries))" [ "$(cstat $DSPORT entries)" = $((NUNITS - 3)) ]
gone=0
for k in $(cat "$T/cache/index.sqlite.aged"); do
	[ -e "$T/cache/blobs/$(echo "$k" | cut -c1-2)/$k" ] && gone=1
done
check "their blobs are gone" [ $gone -eq 0 ]
"$BOLTCCD" --stats-port $DSPORT --cache-admin show >"$T/show.adm"
check "boltccd --cache-admin show: entries $((NUNITS - 3))" grep -q "^entries $((NUNITS - 3))$" "$T/show.adm"

log "--- clear: empty, then a miss, then a hit"
"$BOLTCC" --cache clear >"$T/clear.out" 2>&1
check "boltcc --cache clear: $(cat "$T/clear.out")" grep -q '"cleared_entries":'$((NUNITS - 3)) "$T/clear.out"
check "empty ($(cstat $DSPORT entries) entries, $(cstat $DSPORT stored_bytes) bytes)" \
	sh -c "[ $(cstat $DSPORT entries) = 0 ] && [ $(cstat $DSPORT stored_bytes) = 0 ]"
check "no blob left" [ -z "$(find "$T/cache/blobs" -type f | head -n 1)" ]
m0=$(cstat $DSPORT misses); h0=$(cstat $DSPORT hits)
check "compile after the clear" one 1
check "it was a miss ($m0 -> $(cstat $DSPORT misses))" [ "$(cstat $DSPORT misses)" -eq $((m0 + 1)) ]
check "compile again" one 1
check "then a hit ($h0 -> $(cstat $DSPORT hits))" [ "$(cstat $DSPORT hits)" -eq $((h0 + 1)) ]
BOLTCC_LOCAL_CACHE_SIZE=512M "$BOLTCC" --cache clear --local >"$T/local.out" 2>&1
check "--cache clear --local: $(cat "$T/local.out")" grep -q '^local tier: {"op":"clear"' "$T/local.out"

log "--- zero: the client's counters, the farm's by an operator"
check "more hits" one 1
ch=$(client_stat "$BOLTCC_DIR" cache_hits)
mh=$(metric $DSPORT boltccd_cache_hits_total); jh=$(cstat $DSPORT hits)
check "client counted hits ($ch), farm too (metrics $mh, json $jh)" sh -c "[ $ch -gt 0 ] && [ $mh -gt 0 ] && [ $jh -gt 0 ]"
"$BOLTCC" --zero-stats
check "boltcc --zero-stats: the client's counters are 0" [ "$(client_stat "$BOLTCC_DIR" cache_hits)" = 0 ]
check "... the farm's /metrics unchanged ($(metric $DSPORT boltccd_cache_hits_total))" [ "$(metric $DSPORT boltccd_cache_hits_total)" = "$mh" ]
check "... the farm's /stats.json unchanged ($(cstat $DSPORT hits))" [ "$(cstat $DSPORT hits)" = "$jh" ]
ok0=$(metric $DSPORT boltccd_compile_ok_total)
"$BOLTCCD" --stats-port $DSPORT --zero-stats >"$T/zero.out" 2>&1
check "boltccd --zero-stats: $(cat "$T/zero.out")" grep -q '"op":"zero"' "$T/zero.out"
check "/stats.json cache hits 0 ($(cstat $DSPORT hits))" [ "$(cstat $DSPORT hits)" = 0 ]
check "/stats.json dcc_compile_ok 0 ($($CT dstat $DSPORT dcc_compile_ok))" [ "$($CT dstat $DSPORT dcc_compile_ok)" = 0 ]
check "/stats.json has zeroed_at" [ "$($CT cstat $DSPORT zeroed_at)" -gt 0 ]
check "/metrics hits did not go back ($(metric $DSPORT boltccd_cache_hits_total))" [ "$(metric $DSPORT boltccd_cache_hits_total)" = "$mh" ]
check "/metrics compile_ok did not go back" [ "$(metric $DSPORT boltccd_compile_ok_total)" = "$ok0" ]
curl -s "http://127.0.0.1:$DSPORT/" >"$T/page.txt"
check "text page says when it was zeroed" grep -q '^boltccd_zeroed_at ' "$T/page.txt"
check "text page: the limit" grep -q '^boltccd_cache_limit_bytes ' "$T/page.txt"
check "a hit after the zero" one 1
check "/stats.json counts from the zero (hits $(cstat $DSPORT hits))" [ "$(cstat $DSPORT hits)" = 1 ]
check "/metrics goes on ($(metric $DSPORT boltccd_cache_hits_total))" [ "$(metric $DSPORT boltccd_cache_hits_total)" = $((mh + 1)) ]
# the BOLT zero request from loopback: allowed, zeroes the pages
printf 'BOLT00000001RQST00000004' | timeout 5 $PYTHON -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.stdin.buffer.read())
print(s.recv(4096).decode("latin-1"))' "$DPORT" >"$T/bz.out" 2>&1
check "BOLT ZERO from loopback: INFO ($(cat "$T/bz.out"))" grep -q "INFO.*zeroed" "$T/bz.out"
check "... /stats.json hits 0 again" [ "$(cstat $DSPORT hits)" = 0 ]
check "... /metrics still $((mh + 1))" [ "$(metric $DSPORT boltccd_cache_hits_total)" = $((mh + 1)) ]

log "--- SIGKILL during a clear of many entries"
N=20000
check "build for the copies" build
kill -TERM "$DPID"; i=0; while alive "$DPID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
# N more entries: copies of one real blob under made-up keys (a blob
# does not name its key), with their rows
$PYTHON - "$T/cache" "$N" <<'EOF' || die "cannot fill the cache"
import hashlib, os, shutil, sqlite3, sys, time
d, n = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect(os.path.join(d, "index.sqlite"), timeout=10)
key, size = db.execute("SELECT key, size FROM entries LIMIT 1").fetchone()
src = os.path.join(d, "blobs", key[:2], key)
seq = db.execute("SELECT MAX(seq) FROM entries").fetchone()[0]
now = int(time.time())
rows = []
for i in range(n):
    k = hashlib.sha256(b"copy %d" % i).hexdigest()
    shutil.copyfile(src, os.path.join(d, "blobs", k[:2], k))
    rows.append((k, size, size, now, now, seq + 1 + i))
db.executemany("INSERT INTO entries(key,size,osize,created,last_used,seq) VALUES(?,?,?,?,?,?)", rows)
db.execute("UPDATE state SET value=value+? WHERE name='stored_bytes'", (n * size,))
db.commit()
EOF
# the daemon in its own session, so that SIGKILL reaches its children
# (the keeper, the admin process) by the group's id
KPORT=$($DCC freeport --pair)
set -- $KPORT; KP=$1; KSP=$2
setsid "$BOLTCCD" --no-detach --listen 127.0.0.1 --port "$KP" --stats-port "$KSP" \
	--cache-dir "$T/cache" --log-file "$T/boltccd-kill.log" --jobs 2 >/dev/null 2>&1 &
KPID=$!
_PIDS="$_PIDS $KPID"
$DCC wait-http "$KSP" 15 || die "kill daemon did not start"
before=$(cstat $KSP entries)
check "$before entries before the clear" [ "$before" -ge $N ]
# clients compile while the clear runs (hits and stores)
( for r in 1 2 3; do
	for i in 1 2 3; do
		( cd "$T/proj" && BOLTCC_HOSTS="127.0.0.1:$KP,bolt" BOLTCC_LOCAL_CACHE_SIZE=0 \
		  timeout 60 "$BOLTCC" gcc -O2 -c "u$i.c" -o "u$i.k$r.o" ) 2>/dev/null
	done
  done ) &
BG=$!
curl -s -m 120 -X POST "http://127.0.0.1:$KSP/admin/cache/clear" >"$T/kclear.out" 2>&1 &
CURL=$!
# SIGKILL to the daemon's group (daemon, keeper, admin process) once the
# clear has removed a batch or two, by a watcher polling the index
$PYTHON - "$T/cache/index.sqlite" "$before" "$KPID" <<'EOF' >"$T/watch.out" 2>&1
import os, signal, sqlite3, sys, time
path, before, pgid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
db = sqlite3.connect(path, timeout=10)
t_end = time.time() + 60
while time.time() < t_end:
    n = db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    if n < before - 300:
        break
    time.sleep(0.002)
os.killpg(pgid, signal.SIGKILL)
print("killed at %d entries" % n)
EOF
wait "$CURL" 2>/dev/null
wait "$BG" 2>/dev/null
left=$($PYTHON -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute("SELECT COUNT(*) FROM entries").fetchone()[0])' "$T/cache/index.sqlite")
note "killed with $left of $before entries left ($(cat "$T/kclear.out"))"
check "the kill came during the clear ($(cat "$T/watch.out"): 100 < $left < $before)" sh -c "[ $left -gt 100 ] && [ $left -lt $before ]"
bad=0
for f in "$T"/proj/u*.k*.o; do
	[ -f "$f" ] || continue
	u=$(basename "$f" | cut -d. -f1)
	cmp -s "$f" "$T/proj/$u.local.o" || { bad=$((bad + 1)); note "$f differs"; }
done
check "objects compiled during the clear are all right ($bad bad)" [ $bad -eq 0 ]
"$BOLTCCD" --cache-check --cache-dir "$T/cache" >"$T/check0.txt" 2>&1
note "right after the kill: $(cat "$T/check0.txt")"
# rows whose blobs the clear had removed, and blobs of stores in flight,
# are what the start-up reconciliation is for; nothing may be damaged
check "right after the kill: no bad size, nothing corrupt" \
	grep -q "bad sizes 0, corrupt blobs 0" "$T/check0.txt"
start_boltccd --cache-dir "$T/cache" || die "restart after the kill"
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
check "after the restart: builds, objects identical to local" build
kill -TERM "$DPID"; i=0; while alive "$DPID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$BOLTCCD" --cache-check --cache-dir "$T/cache" >"$T/check1.txt" 2>&1
check "after the restart: --cache-check passes: $(cat "$T/check1.txt")" grep -q ": consistent$" "$T/check1.txt"
start_boltccd --cache-dir "$T/cache" || die "restart"
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"

log "--- a peer that is neither loopback nor --admin-allow"
if ! ip netns add "bcadm$$a" 2>/dev/null; then
	note "SKIP: no ip netns (not root, or no iproute2): refusal by address not tested"
	finish
fi
ip netns add "bcadm$$b" || die "ip netns add"
trap '_rc=$?; ip netns del "bcadm$$a" 2>/dev/null; ip netns del "bcadm$$b" 2>/dev/null; (exit $_rc); _cleanup' EXIT
NA="ip netns exec bcadm$$a"; NB="ip netns exec bcadm$$b"
ip link add "bca$$" netns "bcadm$$a" type veth peer name "bcb$$" netns "bcadm$$b" || die "veth"
$NA ip link set lo up && $NA ip addr add 10.213.7.1/24 dev "bca$$" && $NA ip link set "bca$$" up || die "ns a"
$NB ip link set lo up && $NB ip addr add 10.213.7.2/24 dev "bcb$$" && $NB ip link set "bcb$$" up || die "ns b"
# start_ns_daemon ARGS: a daemon in namespace a, both ports reachable
# from b (--allow), its cache its own
start_ns_daemon() {
	$NA "$BOLTCCD" --no-detach --port 3632 --stats-port 3633 --allow 127.0.0.1 \
		--allow 10.213.7.0/24 --cache-dir "$T/cache-ns" --log-file "$T/boltccd-ns.log" \
		--jobs 1 "$@" >/dev/null 2>&1 &
	NPID=$!
	_PIDS="$_PIDS $NPID"
	$NA $DCC wait-http 3633 15
}
check "daemon in a namespace" start_ns_daemon
code=$($NB curl -s -o "$T/ns403.out" -w '%{http_code}' -X POST "http://10.213.7.1:3633/admin/cache/clear")
check "POST from 10.213.7.2: 403 ($code: $(cat "$T/ns403.out"))" [ "$code" = 403 ]
check "403 names the reason" grep -q "loopback and --admin-allow" "$T/ns403.out"
check "the daemon logged the refusal" grep -q "admin request (clear) from 10.213.7.2.* refused" "$T/boltccd-ns.log"
code=$($NB curl -s -o /dev/null -w '%{http_code}' "http://10.213.7.1:3633/stats.json")
check "reads stay open to --allow ($code)" [ "$code" = 200 ]
code=$($NA curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:3633/admin/stats/zero")
check "the same request on the daemon's loopback: 200 ($code)" [ "$code" = 200 ]
printf 'BOLT00000001RQST00000004' | $NB timeout 5 $PYTHON -c '
import socket, sys
s = socket.create_connection(("10.213.7.1", 3632), timeout=5)
s.sendall(sys.stdin.buffer.read())
print(s.recv(4096).decode("latin-1"))' >"$T/nsbz.out" 2>&1
check "BOLT ZERO from 10.213.7.2: refused ($(cat "$T/nsbz.out"))" grep -q "EROR.*refused.*--admin-allow" "$T/nsbz.out"
# boltcc in b: its --zero-stats never asks the farm, its --cache clear is refused
BOLTCC_HOSTS="10.213.7.1:3632,bolt" BOLTCC_DIR=$(new_client_dir) $NB "$BOLTCC" --cache clear >"$T/nsclear.out" 2>&1
check "boltcc --cache clear from b: refused on its line ($(cat "$T/nsclear.out"))" grep -q "^10.213.7.1:3632,bolt: error: HTTP 403" "$T/nsclear.out"
kill -TERM "$NPID"; i=0; while alive "$NPID" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "daemon with --admin-allow 10.213.7.2" start_ns_daemon --admin-allow 10.213.7.2
code=$($NB curl -s -o "$T/ns200.out" -w '%{http_code}' -X POST "http://10.213.7.1:3633/admin/cache/clear")
check "POST from the --admin-allow address: 200 ($code: $(cat "$T/ns200.out"))" [ "$code" = 200 ]
finish
