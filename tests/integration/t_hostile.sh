#!/bin/sh
# t_hostile.sh - one boltccd against hostile peers.  After EVERY case a good
# job must still succeed, the daemon must still be alive, and its log must
# hold a line giving the reason for the refusal.  Cases: truncated tokens,
# absurd ARGC/ARGV/DOTI lengths, an LZO block that expands past the DOTI
# limit, a zstd frame claiming 2^40 bytes (BOLT), DIST 0/3/4, garbage and
# HTTP on the job port, refused compiler names and -fplugin/-specs, a peer
# trickling one byte per second, 500 connections at once, and a client
# address outside --allow.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
write_sources

extra=""
if "$BOLTCCD" --help 2>&1 | grep -q -- '--request-timeout'; then
	extra="--request-timeout 2"
fi
# shellcheck disable=SC2086
start_boltccd --io-timeout 2 --job-timeout 30 $extra || die "cannot start boltccd"

cd "$T/src" || die "no src"
gcc -E hello.c >hello.i || die "gcc -E"
$DCC build --proto 2 --doti hello.i -- gcc -O2 -c hello.c -o hello.o >"$T/good.bin" ||
	die "cannot build the good request"
gcc -O2 -c hello.c -o "$T/local.o"

# good_job LABEL: the daemon still serves real work.
good_job() {
	if ! alive "$DPID"; then
		fail "after $1: daemon died"
		tail -n 20 "$DLOG" "$DLOG.out"
		die "daemon is gone; stopping"
	fi
	rm -f "$T/good.o"
	$DCC replay "$DPORT" "$T/good.bin" --out "$T/good-reply.bin" --timeout 30 2>/dev/null
	if $DCC check-reply "$T/good-reply.bin" --proto 2 --doto "$T/good.o" --quiet >"$T/gc.txt" &&
		same_file "$T/good.o" "$T/local.o"; then
		pass "after $1: good job still compiles, daemon alive"
	else
		fail "after $1: good job failed: $(cat "$T/gc.txt")"
	fi
}

REASON='WARN|ERROR|refus|reject|deni|not allow|disallow|invalid|bad|limit|too (long|large|big|many)|exceed|protocol|timeout|timed out|deadline|unknown|unsupported|malformed|truncat|unexpected|not (a )?distributable|whitelist|allowlist|not permitted|forbidden|plugin|specs|version|garbage|error|overflow|eof|closed'

# reason_logged LABEL LINES-BEFORE: a new log line with a reason.
reason_logged() {
	_new=$(tail -n +"$(($2 + 1))" "$DLOG" | grep -Ei "$REASON" | head -n 1)
	if [ -n "$_new" ]; then
		pass "$1: reason logged: $(printf '%s' "$_new" | cut -c1-160)"
	else
		fail "$1: no reason line in the daemon log"
		tail -n +"$(($2 + 1))" "$DLOG" | head -n 5 | sed 's/^/    new log: /'
	fi
}

good_job "start-up"
out=$($DCC bolt-hello "$DPORT")
check "BOLT hello answered with INFO: $out" [ $? -eq 0 ]

for c in trunc-token trunc-hex trunc-argv trunc-doti bad-hex argc-huge \
	argv-huge doti-huge doti-near4g lzo-garbage lzo-bomb zstd-huge \
	dist4 dist0 dist3 garbage-http garbage-bin \
	cc-semicolon cc-binsh cc-dotdot cc-usrlocal cc-sh cc-empty \
	fplugin specs no-source argc-zero \
	bolt-v2 bolt-kind99 bolt-cdir-relative bolt-argv-nul bolt-zstd-garbage bolt-zstd-lies \
	bolt-cc-refused bolt-argc-huge; do
	before=$(wc -l <"$DLOG")
	out=$($DCC hostile "$c" "$DPORT" --timeout 20 2>&1)
	rc=$?
	case $rc in
	0) pass "$c: $out" ;;
	2) fail "$c: daemon held the connection past 20 s: $out" ;;
	*) fail "$c: not refused: $out" ;;
	esac
	sleep 0.2
	reason_logged "$c" "$before"
	good_job "$c"
done

# A peer sending one byte per second must be cut off by the request
# deadline (or the io timeout), not held forever.
before=$(wc -l <"$DLOG")
out=$($DCC trickle "$DPORT" --max 40 2>&1)
rc=$?
secs=$(printf '%s' "$out" | sed -n 's/.* after \([0-9]*\)\..*/\1/p')
if [ $rc -eq 0 ] && [ "${secs:-99}" -le 15 ]; then
	pass "trickle: $out"
else
	fail "trickle: not cut off within 15 s: $out"
fi
reason_logged "trickle" "$before"
good_job "trickle"

# 500 connections at once, half of them sending a partial request.
out=$($DCC flood "$DPORT" 500 --hold 2 2>&1)
note "$out"
sleep 0.5
good_job "500 connections"
# After the flood the daemon must be back to normal within the io timeout.
sleep 3
good_job "500 connections (after timeouts)"

# A client address outside --allow is refused and logged.
DPID1=$DPID; DLOG1=$DLOG
set -- $(freeports 1)
APORT=$1
ALOG="$T/boltccd-acl.log"
"$BOLTCCD" --no-detach --listen 127.0.0.1 --port "$APORT" --stats-port 0 \
	--allow 127.0.0.2/32 --log-file "$ALOG" --log-level debug \
	--cache-dir "$T/cache-acl" >"$ALOG.out" 2>&1 &
APID=$!
_PIDS="$_PIDS $APID"
if $DCC wait-port "$APORT" 10; then
	$DCC replay "$APORT" "$T/good.bin" --out "$T/acl-reply.bin" --timeout 10 2>"$T/acl.txt"
	note "acl: $(cat "$T/acl.txt")"
	check "acl: connection from 127.0.0.1 refused without a reply" [ ! -s "$T/acl-reply.bin" ]
	sleep 0.2
	line=$(grep -Ei 'allow|deni|refus|reject|not permitted|acl' "$ALOG" | grep '127\.0\.0\.1' | head -n 1)
	if [ -n "$line" ]; then
		pass "acl: refusal logged: $(printf '%s' "$line" | cut -c1-160)"
	else
		fail "acl: no log line naming 127.0.0.1 and the refusal"
		tail -n 10 "$ALOG" | sed 's/^/    log: /'
	fi
	check "acl: daemon alive" alive "$APID"
else
	fail "acl: daemon with --allow 127.0.0.2/32 did not start"
	tail -n 10 "$ALOG" "$ALOG.out"
fi
DPID=$DPID1; DLOG=$DLOG1
check "main daemon still alive at the end" alive "$DPID"
finish
