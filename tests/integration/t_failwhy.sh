#!/bin/sh
# t_failwhy.sh - every failure says why (issue 21), in the log and to
# the client:
#  1. a request that stalls: cut off by --request-timeout (named, with
#     its value and the bytes that had arrived); BOLT clients get it as
#     EROR, distcc clients a silent close (as distccd);
#  2. a stall under a shorter --io-timeout names the I/O timeout;
#  3. a compile longer than --job-timeout names the job timeout, in the
#     log, in a distcc reply's stderr and in a BOLT EROR;
#  4. a client that shuts down its sending side (SHUT_WR) after a
#     complete request gets its compile and its reply (protocol 2 and
#     BOLT, also when the EOF arrives mid-compile);
#  5. a failed compile's log line has the compiler's stderr head
#     (escaped) on every path: distcc protocol 2, distcc protocol 3
#     (pump; its reply's stderr names the client's file, not the
#     daemon's tree), boltcc in BOLT plain and BOLT pump mode, Debian's
#     distcc client, and a compiler killed by a signal.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
write_sources
cd "$T/src" || die "no src"

mkdir -p "$T/bin"
# a compiler that takes 3 s, and one that dies of SIGSEGV
# (only a compile sleeps: the daemon asks each compiler for its version)
printf '#!/bin/sh\ncase " $* " in *" -c "*) sleep 3 ;; esac\nexec gcc "$@"\n' >"$T/bin/sleepcc"
printf '#!/bin/sh\necho "sigcc: about to crash" >&2\nkill -SEGV $$\n' >"$T/bin/sigcc"
# an executable the kernel cannot run (no #! line): its spawn fails
printf 'not a program\n' >"$T/bin/execfail"
chmod 755 "$T/bin/sleepcc" "$T/bin/sigcc" "$T/bin/execfail"
gcc -E hello.c >hello.i && gcc -E broken.c >broken.i || die "gcc -E"
gcc -O2 -c hello.c -o "$T/local.o" || die "local compile"
req() { _f=$1; shift; $DCC build "$@" >"$T/$_f" || die "build $_f"; }
req p2.bin --proto 2 --doti hello.i -- gcc -O2 -c hello.c -o hello.o
req bolt.bin --proto bolt --doti hello.i -- gcc -O2 -c hello.c -o hello.o
req p2slow.bin --proto 2 --doti hello.i -- "$T/bin/sleepcc" -O2 -c hello.c -o hello.o
req boltslow.bin --proto bolt --doti hello.i -- "$T/bin/sleepcc" -O2 -c hello.c -o hello.o
req p2sig.bin --proto 2 --doti hello.i -- "$T/bin/sigcc" -c hello.c -o hello.o
req p2execfail.bin --proto 2 --doti hello.i -- "$T/bin/execfail" -c hello.c -o hello.o
req p2broken.bin --proto 2 --doti broken.i -- gcc -c broken.c -o broken.o
req p3broken.bin --proto 3 --cwd "$T/src" --files "$T/src/broken.c" -- \
	gcc -c broken.c -o broken.o

# logged LABEL PATTERN: a line of the daemon log matches (grep -E)
logged() {
	_i=0
	while ! grep -Eq -- "$2" "$DLOG" && [ $_i -lt 30 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	_l=$(grep -E -- "$2" "$DLOG" | tail -n 1 | sed 's/^.*boltccd\[[0-9]*\] //' | cut -c1-220)
	if [ -n "$_l" ]; then
		pass "$1: $_l"
	else
		fail "$1: no log line matching /$2/"
		tail -n 5 "$DLOG" | sed 's/^/    log: /'
	fi
}

log "--- daemon A: --request-timeout 1"
start_boltccd --request-timeout 1 --allow-compiler "$T/bin/sleepcc" \
	--allow-compiler "$T/bin/sigcc" --allow-compiler "$T/bin/execfail" ||
	die "cannot start boltccd"

log "--- 1. a request that stalls"
t0=$(date +%s)
$DCC replay "$DPORT" "$T/p2.bin" --first 40 --out "$T/r.bin" --timeout 15 2>/dev/null
check "protocol 2 stall: closed without a reply, within 5 s" \
	[ ! -s "$T/r.bin" ] && [ $(($(date +%s) - t0)) -le 5 ]
logged "protocol 2 stall: log names --request-timeout and the bytes" \
	'request cut off: request timeout \(--request-timeout 1 s\) passed while reading \(40 bytes received'
$DCC replay "$DPORT" "$T/bolt.bin" --first 40 --out "$T/r.bin" --timeout 15 2>/dev/null
out=$($DCC bolt-reply "$T/r.bin")
check "BOLT stall: the client is told: $out" \
	sh -c "printf '%s' '$out' | grep -q '^EROR request timeout (--request-timeout 1 s) passed while reading (40 bytes received'"

log "--- 4. half-close after a complete request"
rm -f "$T/o.o"
$DCC replay "$DPORT" "$T/p2.bin" --half-close --out "$T/r.bin" --timeout 30 2>/dev/null
check "protocol 2, SHUT_WR after the request: a reply with the object" \
	$DCC check-reply "$T/r.bin" --proto 2 --doto "$T/o.o" --quiet
check "protocol 2, SHUT_WR: the object equals the local one" same_file "$T/o.o" "$T/local.o"
$DCC replay "$DPORT" "$T/p2slow.bin" --half-close --out "$T/r.bin" --timeout 30 2>/dev/null
check "protocol 2, SHUT_WR, EOF seen mid-compile: a reply with the object" \
	$DCC check-reply "$T/r.bin" --proto 2 --quiet
$DCC replay "$DPORT" "$T/boltslow.bin" --half-close --out "$T/r.bin" --timeout 30 2>/dev/null
out=$($DCC bolt-reply "$T/r.bin")
check "BOLT, SHUT_WR, EOF seen mid-compile: $out" [ "$out" = "STAT 0" ]
check "no half-closing client counted as a disconnect" \
	sh -c "! grep -q CLI_DISCONNECT '$DLOG'"
logged "the half-close is noted (debug)" 'shut down its sending side \(half-close\); the job goes on'

log "--- 5. the stderr head of every failed compile"
$DCC replay "$DPORT" "$T/p2broken.bin" --out "$T/r.bin" --timeout 30 2>/dev/null
logged "protocol 2 compile error" "compile error in broken.c: .*broken.c:[0-9]+:[0-9]+: error: expected"
$DCC replay "$DPORT" "$T/p2execfail.bin" --out "$T/r.bin" --timeout 30 2>/dev/null
check "a compiler the kernel cannot run: a farm failure (110, as distccd), never a success with no object" \
	$DCC check-reply "$T/r.bin" --proto 2 --expect-stat 28160 --quiet
$DCC replay "$DPORT" "$T/p2sig.bin" --out "$T/r.bin" --timeout 30 2>/dev/null
check "signal-killed compiler: the reply carries its status" \
	$DCC check-reply "$T/r.bin" --proto 2 --expect-stat 11 --quiet
logged "signal-killed compiler: log names the signal and the stderr" \
	'compile error in hello.c: compiler killed by signal 11 \([^)]*\): sigcc: about to crash'
n0=$(grep -c 'compile error in broken.c' "$DLOG")
$DCC replay "$DPORT" "$T/p3broken.bin" --out "$T/r.bin" --timeout 30 2>/dev/null
$DCC check-reply "$T/r.bin" --proto 3 --expect-stat 0x100 >"$T/c3.txt"
rc=$?
check "protocol 3 (pump): a valid reply with the compiler's status: $(head -n 1 "$T/c3.txt")" \
	[ $rc -eq 0 ]
check "protocol 3 (pump): the reply's stderr has the compiler's message: $(grep 'error:' "$T/c3.txt" | head -n 1 | cut -c1-160)" \
	grep -q 'broken.c:[0-9]*:[0-9]*: error: expected' "$T/c3.txt"
check "protocol 3 (pump): the stderr names no daemon path" \
	sh -c "! grep -Eq 'boltccd[._]|$T/tmp' '$T/c3.txt'"
sleep 0.3
n1=$(grep -c 'compile error in broken.c' "$DLOG")
check "protocol 3 (pump): the compile error's log line ($n0 -> $n1) has the stderr: $(grep 'compile error in broken.c' "$DLOG" | tail -n 1 | sed 's/^.*boltccd\[[0-9]*\] //' | cut -c1-200)" \
	sh -c "[ $n1 -gt $n0 ] && grep 'compile error in broken.c' '$DLOG' | tail -n 1 | grep -Eq 'compile error in broken.c: .*broken.c:[0-9]+:[0-9]+: error: expected'"
CDIR=$(new_client_dir)
for mode in bolt bolt,plain; do
	n0=$(grep -c 'compile error in broken.c' "$DLOG")
	BOLTCC_DIR=$CDIR BOLTCC_HOSTS="127.0.0.1:$DPORT,$mode" DISTCC_FALLBACK=0 \
		DISTCC_SKIP_LOCAL_RETRY=1 "$BOLTCC" gcc -c broken.c -o broken.o 2>/dev/null
	sleep 0.3
	n1=$(grep -c 'compile error in broken.c' "$DLOG")
	check "boltcc ,$mode: the compile error's log line ($n0 -> $n1) has the stderr" \
		sh -c "[ $n1 -gt $n0 ] && grep 'compile error in broken.c' '$DLOG' | tail -n 1 | grep -q 'error: expected'"
done
if command -v distcc >/dev/null 2>&1; then
	n0=$(grep -c 'compile error in broken.c' "$DLOG")
	DISTCC_DIR=$CDIR DISTCC_HOSTS="127.0.0.1:$DPORT/2,lzo" DISTCC_FALLBACK=0 \
		DISTCC_SKIP_LOCAL_RETRY=1 distcc gcc -c broken.c -o broken.o 2>/dev/null
	sleep 0.3
	n1=$(grep -c 'compile error in broken.c' "$DLOG")
	check "Debian distcc: the compile error's log line ($n0 -> $n1) has the stderr" \
		sh -c "[ $n1 -gt $n0 ] && grep 'compile error in broken.c' '$DLOG' | tail -n 1 | grep -q 'error: expected'"
	DISTCC_DIR=$CDIR DISTCC_HOSTS="127.0.0.1:$DPORT/2,lzo" DISTCC_FALLBACK=0 \
		distcc gcc -O2 -c hello.c -o "$T/distcc.o" 2>"$T/distcc.err"
	check "Debian distcc still compiles: $(head -c 200 "$T/distcc.err")" same_file "$T/distcc.o" "$T/local.o"
else
	note "no distcc client: its case skipped"
fi
kill -TERM "$DPID"

log "--- daemon B: --io-timeout 1 --job-timeout 2"
start_boltccd --io-timeout 1 --job-timeout 2 --allow-compiler "$T/bin/sleepcc" ||
	die "cannot start boltccd"
log "--- 2. a stall under the I/O timeout"
$DCC replay "$DPORT" "$T/p2.bin" --first 40 --out "$T/r.bin" --timeout 15 2>/dev/null
logged "protocol 2 stall: log names --io-timeout" \
	'request cut off: I/O timeout \(--io-timeout 1 s\): no progress for 1000 ms while reading \(40 bytes received'

log "--- 3. a compile longer than --job-timeout"
$DCC replay "$DPORT" "$T/p2slow.bin" --out "$T/r.bin" --timeout 30 2>/dev/null
$DCC check-reply "$T/r.bin" --proto 2 --expect-stat any >"$T/c.txt"
check "protocol 2: the reply's stderr names the job timeout: $(grep SERR "$T/c.txt")" \
	grep -q 'SERR: boltccd: job timeout (--job-timeout 2 s) passed: compile killed after' "$T/c.txt"
logged "protocol 2: the log says COMPILE_TIMEOUT and why" \
	'COMPILE_TIMEOUT: job timeout \(--job-timeout 2 s\) passed: compile killed after [0-9]+ ms'
$DCC replay "$DPORT" "$T/boltslow.bin" --out "$T/r.bin" --timeout 30 2>/dev/null
out=$($DCC bolt-reply "$T/r.bin")
check "BOLT: the client is told: $out" \
	sh -c "printf '%s' '$out' | grep -q '^EROR job timeout (--job-timeout 2 s) passed: compile killed after'"
check "daemon alive" alive "$DPID"
finish
