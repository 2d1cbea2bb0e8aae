#!/bin/sh
# setup.sh - install what boltcc needs, build it, and show it working:
#   sh setup.sh
# 1. build dependencies (apt-get when run as root on Debian/Ubuntu),
# 2. autoreconf + configure + make in build/normal,
# 3. demo: a boltccd on 127.0.0.1 (free port, temp log), the bundled sample
#    project built with `make -j4 CC="boltcc gcc"`, the program run, and
#    what happened: jobs sent, fallbacks, the daemon's own stats; then a
#    second working copy built by another client, all hits in the shared
#    cache, and the cache statistics.
# Nothing is installed system-wide except the packages of step 1.

set -u
cd "$(dirname "$0")" || exit 1
ROOT=$(pwd)
B="$ROOT/build/normal"
JOBS=${JOBS:-2}

. "$ROOT/tests/deps.sh"
echo "== 1/3 dependencies"
bc_ensure_deps || exit 1
echo "   ok"

echo "== 2/3 build (build/normal)"
mkdir -p "$B"
if ! autoreconf -fi >"$ROOT/build/autoreconf.log" 2>&1; then
	tail -n 20 "$ROOT/build/autoreconf.log"
	echo "setup: autoreconf failed (build/autoreconf.log)"
	exit 1
fi
if ! (cd "$B" && "$ROOT/configure" --enable-werror) >"$B/configure.log" 2>&1; then
	tail -n 20 "$B/configure.log"
	echo "setup: configure failed ($B/configure.log)"
	exit 1
fi
if ! make -C "$B" -j"$JOBS" >"$B/make.log" 2>&1; then
	grep -E 'error|Error' "$B/make.log" | head -n 20
	echo "setup: make failed ($B/make.log)"
	exit 1
fi
echo "   built $B/boltcc and $B/boltccd ($("$B/boltcc" --version 2>/dev/null | head -n 1))"

echo "== 3/3 demo"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/boltcc-demo.XXXXXX") || exit 1
DPID=""
cleanup() {
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null
	[ -n "$DPID" ] && wait "$DPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# stats port = job port + 1: where `boltcc --stats` looks for a host's stats
set -- $(python3 "$ROOT/tests/integration/dcc.py" freeport --pair)
PORT=$1
SPORT=$2
"$B/boltccd" --no-detach --listen 127.0.0.1 --port "$PORT" --stats-port "$SPORT" \
	--log-file "$TMP/boltccd.log" --cache-dir "$TMP/cache" --jobs 2 >"$TMP/boltccd.out" 2>&1 &
DPID=$!
if ! python3 "$ROOT/tests/integration/dcc.py" wait-http "$SPORT" 15; then
	echo "setup: boltccd did not start:"
	tail -n 10 "$TMP/boltccd.log" "$TMP/boltccd.out" 2>/dev/null
	exit 1
fi
echo "   daemon:  boltccd --listen 127.0.0.1 --port $PORT --stats-port $SPORT (pid $DPID)"

cp -R "$ROOT/sample" "$TMP/sample"
rm -f "$TMP"/sample/*.o "$TMP"/sample/*.d "$TMP/sample/calc"
mkdir "$TMP/state"
BOLTCC_HOSTS="127.0.0.1:$PORT,bolt"
BOLTCC_DIR="$TMP/state"
export BOLTCC_HOSTS BOLTCC_DIR
echo "   client:  BOLTCC_HOSTS='$BOLTCC_HOSTS' make -C sample -j4 CC=\"boltcc gcc\""
t0=$(date +%s)
if ! make -C "$TMP/sample" -j4 CC="$B/boltcc gcc" >"$TMP/make.log" 2>&1; then
	tail -n 20 "$TMP/make.log"
	echo "setup: the sample build failed"
	exit 1
fi
t1=$(date +%s)
echo "   built the sample (10 files) in $((t1 - t0))s; running it:"
echo
"$TMP/sample/calc" | sed 's/^/      /'
echo
if "$TMP/sample/calc" | cmp -s - "$TMP/sample/expected.txt"; then
	echo "   output matches sample/expected.txt"
else
	echo "   WARNING: output differs from sample/expected.txt"
fi

echo
"$B/boltcc" --stats --json >"$TMP/stats.json" 2>/dev/null
python3 - "$TMP/stats.json" <<'PY'
import json, sys
try:
    c = json.load(open(sys.argv[1]))["client"]["counters"]
except Exception as e:
    print("   (boltcc --stats --json unreadable: %s)" % e)
    sys.exit(0)
fb = sum(v for k, v in c.items() if k.startswith("fallback_by_reason:"))
local = ", ".join("%s %d" % (k.split(":", 1)[1], v) for k, v in sorted(c.items())
                  if k.startswith("local_by_reason:"))
print("   client (boltcc --stats): %d jobs compiled on the daemon, %d local (%s), "
      "%d fallbacks, %d host failures, %d bytes sent, %d received"
      % (c.get("jobs_remote_ok", 0), c.get("jobs_local", 0), local or "-", fb,
         c.get("host_failures", 0), c.get("bytes_sent", 0), c.get("bytes_received", 0)))
PY
# A second developer: another working copy, its own client state.  Every
# object is already in the daemon's shared cache.
cp -R "$ROOT/sample" "$TMP/sample2"
rm -f "$TMP"/sample2/*.o "$TMP"/sample2/*.d "$TMP/sample2/calc"
mkdir "$TMP/state2"
t0=$(date +%s)
if ! BOLTCC_DIR="$TMP/state2" make -C "$TMP/sample2" -j4 CC="$B/boltcc gcc" \
    >"$TMP/make2.log" 2>&1; then
	tail -n 20 "$TMP/make2.log"
	echo "setup: the second sample build failed"
	exit 1
fi
t1=$(date +%s)
same=yes
for o in "$TMP"/sample/*.o; do
	cmp -s "$o" "$TMP/sample2/$(basename "$o")" || same=no
done
echo "   a second working copy (another client) built in $((t1 - t0))s; objects identical: $same"
echo
echo "   boltcc --stats (this client, and the daemon's shared cache):"
"$B/boltcc" --stats 2>&1 | sed 's/^/      /'
echo
echo "   daemon (GET http://127.0.0.1:$SPORT/, distccd's format):"
python3 "$ROOT/tests/integration/dcc.py" http "$SPORT" / |
	grep -E '^dcc_(tcp_accept|compile_ok|compile_error|rej_bad_req|other|longest_job|longest_job_time_msecs|max_kids) ' |
	tr '\n' ' ' | sed 's/^/      /; s/ $/\n/'
echo
echo "Done. To use it yourself (see README.md):"
echo "   on each worker:  $B/boltccd --allow 192.168.1.0/24"
echo "   on your machine: export BOLTCC_HOSTS='worker1,bolt worker2,bolt'"
echo "                    make -j8 CC=\"$B/boltcc gcc\""
echo "Tests: sh tests/run.sh"
