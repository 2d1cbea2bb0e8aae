#!/bin/sh
# t_stalled.sh - stalled and idle connections never lock good clients
# out of a loopback boltccd with its default --queue and --request-timeout:
#  1. 300 connections that send 8 bytes of a request (DIST0000) and then
#     nothing, held open while 60 real `distcc gcc -c` jobs run 8 at a
#     time with DISTCC_FALLBACK=0: 60 of 60 compiled there, none refused;
#     /stats.json counts the connections that are still reading;
#  2. 2000 idle connections (nothing sent): the daemon stays up, holds no
#     more descriptors than its bound (intake.h) plus its reserve, drops
#     the most silent ones first, and good jobs are still served;
#  3. a burst of 200 valid requests at once against --jobs 2: all served
#     (they wait in the daemon, none is reset);
#  4. a request that is not whole when --request-timeout expires is
#     dropped, and the log names the option;
#  5. under a low descriptor limit (ulimit -n 256: bound 192), 400 idle
#     connections: the most silent are dropped for the newcomers, a good
#     job is served, the daemon never runs out of descriptors.
. "$(dirname "$0")/lib.sh"
BOLTCC_LOCAL_CACHE_SIZE=0
export BOLTCC_LOCAL_CACHE_SIZE
need_binaries
need_tool gcc distcc
STALL="$PYTHON $HERE/stall.py"
write_sources
cd "$T/src" || die "cd"

start_boltccd --jobs 2 --no-cache || die "boltccd"
fds() { ls "/proc/$DPID/fd" 2>/dev/null | wc -l; }

# --- 1: 300 stalled + 60 real jobs -------------------------------------
$STALL hold "$DPORT" 300 'DIST0000' 600 >"$T/hold1.out" 2>&1 &
H1=$!
_PIDS="$_PIDS $H1"
wait_until 10 grep -q '^hold: 300 open' "$T/hold1.out"
check "300 stalled connections open" grep -q '^hold: 300 open, 0 failed' "$T/hold1.out"
reading=$($DCC http "$DSPORT" /stats.json | sed -n 's/.*"connections_reading":\([0-9]*\).*/\1/p')
check "stats.json: 300 connections reading, no worker for them ($reading)" \
	test "${reading:-0}" -ge 300
i=1
while [ $i -le 60 ]; do
	printf 'int job%d(int x) { return x * %d; }\n' "$i" "$i" >"j$i.c"
	echo "$i"
	i=$((i + 1))
done >"$T/list"
DISTCC_HOSTS="127.0.0.1:$DPORT/8" DISTCC_FALLBACK=0 DISTCC_DIR="$T/dcc"
export DISTCC_HOSTS DISTCC_FALLBACK DISTCC_DIR
mkdir -p "$T/dcc"
# {} is the job's number (a letter such as N could stand in "$T" too)
xargs -P 8 -I {} sh -c 'distcc gcc -c j{}.c -o j{}.o 2>>"$1/distcc.err" ||
	echo {} >>"$1/failed"' _ "$T" <"$T/list"
unset DISTCC_HOSTS DISTCC_FALLBACK
built=$(ls j*.o 2>/dev/null | wc -l)
check "60 of 60 distcc jobs compiled with 300 stalled sockets ($built)" \
	test "$built" -eq 60 -a ! -s "$T/failed"
ok=$(dstat "$DSPORT" dcc_compile_ok)
check "... all of them on the daemon (dcc_compile_ok $ok)" test "$ok" -ge 60
check "... none refused as busy" sh -c "! grep -q 'busy:' '$DLOG'"
reading=$($DCC http "$DSPORT" /stats.json | sed -n 's/.*"connections_reading":\([0-9]*\).*/\1/p')
check "the 300 stalled connections are still held, with no worker ($reading)" \
	test "${reading:-0}" -ge 300
kill "$H1" 2>/dev/null
wait "$H1" 2>/dev/null

# --- 2: 2000 idle connections -------------------------------------------
before=$(fds)
$STALL hold "$DPORT" 2000 '' 600 >"$T/hold2.out" 2>&1 &
H2=$!
_PIDS="$_PIDS $H2"
wait_until 30 grep -q '^hold: ' "$T/hold2.out"
sleep 1
bound=$(sed -n 's/.*waiting for a whole request: at most \([0-9]*\),.*/\1/p' "$DLOG" | head -n 1)
peak=$(fds)
note "2000 idle: $(head -n 1 "$T/hold2.out"); daemon fds $before -> $peak; bound ${bound:-?}"
check "the daemon logged its bound on waiting connections" test -n "$bound"
check "its descriptors stay within the bound plus 64 ($peak)" \
	test "$peak" -le $((${bound:-0} + 64))
check "the daemon is alive with 2000 idle sockets" alive "$DPID"
BOLTCC_HOSTS="127.0.0.1:$DPORT/2" DISTCC_FALLBACK=0 \
	"$BOLTCC_BUILDDIR/boltcc" gcc -c hello.c -o hello-idle.o >"$T/idle-job.out" 2>&1
check "a good job is served meanwhile" test $? -eq 0 -a -s hello-idle.o
kill "$H2" 2>/dev/null
wait "$H2" 2>/dev/null

# --- 3: a burst of 200 ----------------------------------------------------
$STALL burst "$DPORT" 200 >"$T/burst.out" 2>&1
check "200 valid requests at once against --jobs 2: all served ($(cat "$T/burst.out"))" \
	grep -q '^ok 200 reset 0 other 0$' "$T/burst.out"
check "... none refused as busy" sh -c "! grep -q 'busy:' '$DLOG'"

# --- 4: --request-timeout ---------------------------------------------------
kill "$DPID"
wait "$DPID" 2>/dev/null
start_boltccd --jobs 2 --no-cache --request-timeout 2 || die "boltccd 2"
$STALL hold "$DPORT" 3 'DIST00000002ARGC' 8 >"$T/hold3.out" 2>&1
check "request timeout: the daemon closed the 3 stalled connections" \
	grep -q '^hold: the daemon closed 3 of 3' "$T/hold3.out"
check "... and the log names --request-timeout" \
	grep -q 'request cut off: request timeout (--request-timeout 2 s) passed while reading (16 bytes received, 0 sent)' "$DLOG"
expired=$($DCC http "$DSPORT" /stats.json | sed -n 's/.*"requests_expired":\([0-9]*\).*/\1/p')
check "stats.json counts them ($expired)" test "${expired:-0}" -eq 3

# --- 5: a low descriptor limit ----------------------------------------------
kill "$DPID"
wait "$DPID" 2>/dev/null
printf '#!/bin/sh\nulimit -n 256 || exit 1\nexec "%s" "$@"\n' "$BOLTCCD" \
	>"$T/lowfd" && chmod +x "$T/lowfd" || die "lowfd"
REAL_BOLTCCD=$BOLTCCD
BOLTCCD="$T/lowfd"
start_boltccd --jobs 2 --no-cache || die "boltccd under ulimit -n 256"
BOLTCCD=$REAL_BOLTCCD
check "ulimit -n 256: the bound is 192, 144 per address" \
	grep -q 'waiting for a whole request: at most 192, 144 per client address (256 descriptors)' "$DLOG"
$STALL hold "$DPORT" 400 '' 600 >"$T/hold4.out" 2>&1 &
H4=$!
_PIDS="$_PIDS $H4"
wait_until 30 grep -q '^hold: ' "$T/hold4.out"
# the kernel may hold a burst of handshakes a while (SYN backlog, SYN
# cookies after part 2): wait until the daemon has met its bound
wait_until 20 grep -q 'dropped after 0 bytes of a request: the most silent' \
	"$DLOG"
peak=$(fds)
check "400 idle connections: the daemon's descriptors stay under 256 ($peak)" \
	test "$peak" -lt 256
BOLTCC_HOSTS="127.0.0.1:$DPORT/2" DISTCC_FALLBACK=0 \
	"$BOLTCC_BUILDDIR/boltcc" gcc -c hello.c -o hello-low.o >"$T/low-job.out" 2>&1
check "a good job is served meanwhile" test $? -eq 0 -a -s hello-low.o
check "the most silent connections were dropped, and the log says why" \
	grep -q 'dropped after 0 bytes of a request: the most silent' "$DLOG"
check "no accept failed for want of descriptors" \
	sh -c "! grep -q 'accept: Too many open files' '$DLOG'"
kill "$H4" 2>/dev/null
wait "$H4" 2>/dev/null
check "the daemon is alive" alive "$DPID"
finish
