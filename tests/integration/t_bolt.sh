#!/bin/sh
# t_bolt.sh - boltcc -> boltccd: with ",bolt" in BOLTCC_HOSTS (pump, the
# default, and plain with ",plain") and through the one-time probe (plain
# DISTCC_HOSTS); gcc and clang; objects and -MD files identical to local
# compiles; compile errors and warnings reported.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
write_sources
start_boltccd || die "cannot start boltccd"
cd "$T/src" || die "no src"

_n=0
# compiled_ok: the daemon's successful-job counter
ok_count() { dstat "$DSPORT" dcc_compile_ok; }

# remote_same LABEL COMPILER ARGS...: compile a fresh variant of hello.c
# (so it is a real compile, not a cache hit) locally and through
# boltcc (no fallback allowed), check the daemon counted it, compare.
remote_same() {
	_label=$1; shift
	_cc=$1; shift
	rm -f l.o r.o
	_n=$((_n + 1))
	_src=$(variant "$_n")
	"$_cc" "$@" -c "$_src" -o l.o || { fail "$_label: local compile"; return; }
	_before=$(ok_count)
	if ! DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" "$_cc" "$@" -c "$_src" -o r.o 2>"$T/err.txt"; then
		fail "$_label: boltcc exited non-zero: $(head -c 400 "$T/err.txt")"
		return
	fi
	_after=$(dstat_above "$DSPORT" dcc_compile_ok "$_before")
	check "$_label: daemon compiled it (dcc_compile_ok $_before -> $_after)" \
		[ "$_after" -gt "$_before" ]
	check "$_label: object identical to local compile" same_file l.o r.o
	check "$_label: no messages on stderr" [ ! -s "$T/err.txt" ]
	[ -s "$T/err.txt" ] && sed 's/^/    stderr: /' "$T/err.txt"
}

BOLTCC_DIR=$(new_client_dir)
export BOLTCC_DIR

# Both modes toward boltccd: pump (the default) and plain (",plain").
for MODE in pump plain; do
	BOLTCC_DIR=$(new_client_dir)
	if [ "$MODE" = plain ]; then
		BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt,plain"
	else
		BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
	fi
	export BOLTCC_HOSTS BOLTCC_DIR
	log "--- BOLT extension, $MODE mode (BOLTCC_HOSTS=$BOLTCC_HOSTS)"
	remote_same "$MODE gcc -O2" gcc -O2 -g0
	remote_same "$MODE gcc -O0" gcc -O0 -g0 -Wall
	if command -v clang >/dev/null 2>&1; then
		remote_same "$MODE clang -O2" clang -O2 -g0
	else
		note "clang not installed: clang cases not run"
	fi

	# -MD -MF: the .d written through boltcc equals the local one.
	mkdir -p obj
	rm -f obj/x.o l.d r.d
	gcc -O2 -g0 -MD -MF l.d -c hello.c -o obj/x.o && mv obj/x.o l.o
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -g0 -MD -MF r.d -c hello.c -o obj/x.o
	check "$MODE -MD -MF: exit 0 and object written" [ -s obj/x.o ]
	check "$MODE -MD -MF: object identical" same_file l.o obj/x.o
	check "$MODE -MD -MF: dependency file identical" same_file l.d r.d
	# -MMD without -MF: the .d goes next to the object with the right target.
	rm -f obj/*.d obj/x.o
	gcc -O2 -g0 -MMD -c hello.c -o obj/x.o && mv obj/x.d l.d
	rm -f obj/x.o
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -g0 -MMD -c hello.c -o obj/x.o
	check "$MODE -MMD: obj/x.d written next to the object" [ -f obj/x.d ]
	check "$MODE -MMD: obj/x.d identical to local" same_file l.d obj/x.d
	check "$MODE -MMD: no stray hello.d in the source dir" [ ! -f hello.d ]

	# A genuine compile error: compiler's message, exit status 1, no object.
	rm -f b.o
	gcc -c broken.c -o b.o 2>"$T/local-err.txt"
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -c broken.c -o b.o 2>"$T/err.txt"
	rc=$?
	check "$MODE compile error: exit status 1 (got $rc)" [ $rc -eq 1 ]
	check "$MODE compile error: compiler message shown" grep -q "expected ';'" "$T/err.txt"
	check "$MODE compile error: names the file and line" grep -q "broken.c:[0-9]" "$T/err.txt"
	check "$MODE compile error: no object left behind" [ ! -e b.o ]
	sed 's/^/    stderr: /' "$T/err.txt" | head -n 5
	DISTCC_SKIP_LOCAL_RETRY=1 DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -c broken.c -o b.o 2>"$T/err2.txt"
	rc=$?
	check "$MODE compile error, DISTCC_SKIP_LOCAL_RETRY: exit 1 (got $rc)" [ $rc -eq 1 ]
	check "$MODE compile error, DISTCC_SKIP_LOCAL_RETRY: remote message shown" \
		grep -q "expected ';'" "$T/err2.txt"
	check "$MODE compile error: the daemon's log gives the compiler's message" \
		grep -q "compile error in broken.c: .*expected ';'" "$DLOG"
	check "$MODE compile error: the log line stays one line (newlines escaped)" \
		sh -c "grep 'compile error in broken.c' '$DLOG' | grep -q '\\\\n'"

	# Warnings are shown and do not fail the compile.
	rm -f w.o
	DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -Wall -c warn.c -o w.o 2>"$T/err.txt"
	rc=$?
	check "$MODE warning: exit 0 (got $rc)" [ $rc -eq 0 ]
	check "$MODE warning: object written" [ -s w.o ]
	check "$MODE warning: warning text shown" grep -q "unused variable" "$T/err.txt"

	# The same job again (boltccd may answer from its artifact cache): still
	# counted, still the same object.  (Without BOLTCC_LOCAL_CACHE_SIZE=0
	# this machine's local tier answers it: t_hitcache.sh.)
	rm -f r2.o
	before=$(ok_count)
	BOLTCC_LOCAL_CACHE_SIZE=0 DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc \
		-O2 -g0 -c "hello_v1.c" -o r2.o 2>"$T/err.txt"
	rc=$?
	gcc -O2 -g0 -c hello_v1.c -o l2.o
	after=$(dstat_above "$DSPORT" dcc_compile_ok "$before")
	check "repeat of a job: exit 0 (got $rc)" [ $rc -eq 0 ]
	check "repeat of a job: served by the daemon (dcc_compile_ok $before -> $after)" [ "$after" -gt "$before" ]
	check "repeat of a job: object identical to local" same_file l2.o r2.o
	if grep -q 'lookup\|cache hit\|HIT' "$DLOG" 2>/dev/null; then
		note "the daemon log shows artifact-cache lookups"
	fi
	"$BOLTCC" --stats --json >"$T/mode.json"
	jp=$(json_get "$T/mode.json" jobs_pump)
	if [ "$MODE" = plain ]; then
		check "plain mode: no pump job (jobs_pump $jp)" [ "$jp" = missing ]
	else
		[ "$jp" != missing ] && [ "$jp" -ge 5 ]
		check "pump is the default toward boltccd (jobs_pump $jp)" [ $? -eq 0 ]
	fi

done

log "--- probe (DISTCC_HOSTS=127.0.0.1:$DPORT, fresh state dir)"
unset BOLTCC_HOSTS
BOLTCC_DIR=$(new_client_dir)
DISTCC_HOSTS="127.0.0.1:$DPORT"
export BOLTCC_DIR DISTCC_HOSTS
remote_same "probe gcc (first job)" gcc -O2 -g0
remote_same "probe gcc (learned)" gcc -O2 -g0
if command -v clang >/dev/null 2>&1; then
	remote_same "probe clang" clang -O2 -g0
fi
if grep -qi 'bolt' "$DLOG" 2>/dev/null; then
	pass "daemon log mentions BOLT requests"
else
	note "daemon log does not name the protocol; cannot tell BOLT from DIST"
fi

log "--- a job the daemon refuses (compiler not on its allowlist)"
# BOLT tells the client why (EROR); the job falls back to a local compile,
# and, being a refusal of that one job, must not take the host out of use.
unset DISTCC_HOSTS
BOLTCC_DIR=$(new_client_dir)
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt"
export BOLTCC_DIR BOLTCC_HOSTS
mkdir -p "$T/odd"
ln -s "$(command -v gcc)" "$T/odd/mycc"
rm -f m.o m2.o
DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" "$T/odd/mycc" -c hello.c -o m.o 2>"$T/err.txt"
rc=$?
check "refused compiler, DISTCC_FALLBACK=0: exit 116 (got $rc)" [ $rc -eq 116 ]
check "refused compiler: the daemon's reason reaches the user" grep -q "not allowed" "$T/err.txt"
sed 's/^/    stderr: /' "$T/err.txt" | head -n 2
timeout 60 "$BOLTCC" "$T/odd/mycc" -c hello.c -o m2.o 2>"$T/err.txt"
rc=$?
check "refused compiler with fallback: exit 0 (got $rc)" [ $rc -eq 0 ]
check "refused compiler with fallback: object written locally" [ -s m2.o ]
src=$(variant after-refusal)
before=$(ok_count)
DISTCC_FALLBACK=0 timeout 60 "$BOLTCC" gcc -O2 -g0 -c "$src" -o ar.o 2>"$T/err.txt"
rc=$?
after=$(dstat_above "$DSPORT" dcc_compile_ok "$before")
check "after a refused job the host is still used (exit $rc, dcc_compile_ok $before -> $after)" \
	[ "$after" -gt "$before" ]
[ $rc -ne 0 ] && sed 's/^/    stderr: /' "$T/err.txt" | head -n 2

check "daemon still alive" alive "$DPID"
finish
