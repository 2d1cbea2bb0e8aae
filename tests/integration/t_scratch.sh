#!/bin/sh
# t_scratch.sh - the daemon's scratch directory (daemon/scratch.c):
#  1. --tmp-dir is honoured: the job dir is created there, named
#     boltccd.<uid>.<worker pid>.XXXXXX, the compiler runs with
#     TMPDIR = its job dir, nothing is left after the job;
#  2. a worker killed by SIGKILL mid-compile: its job dir is swept;
#  3. at start the daemon sweeps dirs of dead workers of an earlier run,
#     never following a planted symlink, leaving live workers' dirs,
#     other names and symlinks alone;
#  4. the default without TMPDIR (tmpfs /dev/shm when there is one), and
#     a bad --tmp-dir is refused;
#  5. the compile slots' lock file is in the scratch dir too: --tmp-dir,
#     else TMPDIR (daemon mode: the unlinked private file, seen through
#     /proc where there is one; --inetd: the per-user shared file).
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
write_sources
cd "$T/src" || die "no src"
uid=$(id -u)

# A test compiler: records its TMPDIR and cwd, waits while the hold file
# exists (bounded), then runs gcc.
mkdir -p "$T/bin" "$T/scr"
cat >"$T/bin/slowcc" <<'EOF2'
#!/bin/sh
printf '%s\n%s\n' "$TMPDIR" "$(pwd)" >"$SCRATCH_SEEN.tmp" &&
	mv "$SCRATCH_SEEN.tmp" "$SCRATCH_SEEN"
i=0
while [ -e "$SCRATCH_HOLD" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
exec gcc "$@"
EOF2
chmod 755 "$T/bin/slowcc"
SCRATCH_SEEN="$T/seen"
SCRATCH_HOLD="$T/hold"
export SCRATCH_SEEN SCRATCH_HOLD

gcc -E hello.c >hello.i || die "gcc -E"
$DCC build --proto 2 --doti hello.i -- "$T/bin/slowcc" -O2 -c hello.c -o hello.o >"$T/req.bin"

# wait_for COND...: poll up to 10 s
wait_for() {
	_i=0
	while ! "$@" && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	"$@"
}
no_job_dirs() { ! ls "$1" 2>/dev/null | grep -q '^boltccd\.'; }
gone() { [ ! -e "$1" ] && [ ! -L "$1" ]; }

log "--- 1. --tmp-dir"
start_boltccd --tmp-dir "$T/scr" --allow-compiler "$T/bin/slowcc" --no-cache || die "cannot start boltccd"
check "log names the scratch dir and its origin" grep -q "scratch dir $T/scr (from --tmp-dir)" "$DLOG"
$DCC replay "$DPORT" "$T/req.bin" --out "$T/r1.bin" 2>"$T/r1.err"
check "job through the test compiler compiled" $DCC check-reply "$T/r1.bin" --proto 2 --quiet
seen_tmp=$(sed -n 1p "$T/seen" 2>/dev/null)
seen_cwd=$(sed -n 2p "$T/seen" 2>/dev/null)
note "compiler saw TMPDIR=$seen_tmp cwd=$seen_cwd"
case "$seen_tmp" in
"$T/scr/boltccd.$uid."*.??????) pass "the compiler's TMPDIR is a job dir in --tmp-dir" ;;
*) fail "the compiler's TMPDIR is '$seen_tmp', not a job dir under $T/scr" ;;
esac
check "the compiler's TMPDIR is its job dir (its cwd)" [ "$seen_tmp" = "$seen_cwd" ]
check "the job dir is removed after the job" wait_for gone "$seen_tmp"
check "no job dir in the daemon's TMPDIR" no_job_dirs "$T/tmp"

log "--- 2. worker killed by SIGKILL mid-compile"
rm -f "$T/seen"
: >"$T/hold"
$DCC replay "$DPORT" "$T/req.bin" --out "$T/r2.bin" --timeout 60 2>/dev/null &
RPID=$!
if wait_for test -s "$T/seen"; then
	jd=$(sed -n 1p "$T/seen")
	wpid=$(basename "$jd" | cut -d. -f3)
	note "job dir $jd, worker $wpid"
	check "job dir exists while the compiler runs" test -d "$jd"
	check "worker pid in the name is a live child of the daemon" \
		sh -c "kill -0 '$wpid' && grep -q '^PPid:[[:space:]]*$DPID\$' /proc/$wpid/status 2>/dev/null || [ ! -d /proc ]"
	kill -KILL "$wpid" 2>/dev/null
	check "the dead worker's job dir is swept" wait_for gone "$jd"
	check "log tells the sweep" wait_for grep -q "scratch sweep: removed 1 job dir" "$DLOG"
else
	fail "the test compiler did not start"
fi
rm -f "$T/hold"
wait $RPID 2>/dev/null
check "daemon alive after its worker was killed" alive "$DPID"

log "--- 3. sweep at start, no symlink followed"
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
dead=$(sh -c 'echo $$')
mkdir -p "$T/outside" "$T/outside2"
echo keep >"$T/outside/keep"
echo keep >"$T/outside2/keep"
stale="$T/scr/boltccd.$uid.$dead.stale1"
mkdir -p "$stale/root/usr/include" "$stale/ro"
echo x >"$stale/out.o"
ln -s "$T/outside" "$stale/escape"
ln -s "$T/outside" "$stale/root/usr/include/escape"
chmod 500 "$stale/ro"
ln -s "$T/outside2" "$T/scr/boltccd.$uid.$dead.link01"
mkdir "$T/scr/boltccd.$uid.$$.alive1"
mkdir "$T/scr/boltccd_$dead"
start_boltccd --tmp-dir "$T/scr" --allow-compiler "$T/bin/slowcc" --no-cache || die "cannot restart boltccd"
check "dead worker's dir removed at start" wait_for gone "$stale"
check "file behind a symlink inside it kept" [ -f "$T/outside/keep" ]
check "symlink with a job dir's name left alone" [ -L "$T/scr/boltccd.$uid.$dead.link01" ]
check "its target's content kept" [ -f "$T/outside2/keep" ]
check "a live process's dir left alone" [ -d "$T/scr/boltccd.$uid.$$.alive1" ]
check "a name outside the pattern left alone" [ -d "$T/scr/boltccd_$dead" ]
$DCC replay "$DPORT" "$T/req.bin" --out "$T/r3.bin" 2>/dev/null
check "restarted daemon compiles" $DCC check-reply "$T/r3.bin" --proto 2 --quiet
if [ -d "/proc/$DPID/fd" ]; then
	check "5. daemon's slot file is in --tmp-dir" \
		sh -c "ls -l /proc/$DPID/fd | grep -q '$T/scr/boltccd-slots-'"
	check "5. ... not in TMPDIR" \
		sh -c "! ls -l /proc/$DPID/fd | grep -q '$T/tmp/boltccd-slots-'"
else
	note "no /proc: daemon mode's unlinked slot file not looked for"
fi

log "--- 4. default scratch dir, bad --tmp-dir"
set -- $($DCC freeport --pair)
env -u TMPDIR "$BOLTCCD" --no-detach --listen 127.0.0.1 --port "$1" \
	--stats-port "$2" --log-file "$T/default.log" --no-cache >"$T/default.out" 2>&1 &
p=$!
_PIDS="$_PIDS $p"
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ]; then
	want="scratch dir /dev/shm (from tmpfs)"
else
	want="scratch dir /tmp (from /tmp)"
fi
check "without TMPDIR: '$want'" wait_for grep -q "$want" "$T/default.log"
kill -TERM "$p"
wait "$p" 2>/dev/null
"$BOLTCCD" --no-detach --tmp-dir "$T/nonexistent" --port "$1" >"$T/bad.out" 2>&1
rc=$?
check "--tmp-dir to a missing dir: exit 101 (got $rc)" [ $rc -eq 101 ]
check "... naming the option" grep -q -- "--tmp-dir" "$T/bad.out"
"$BOLTCCD" --no-detach --tmp-dir relative/dir --port "$1" >"$T/bad.out" 2>&1
rc=$?
check "--tmp-dir relative: exit 101 (got $rc)" [ $rc -eq 101 ]

log "--- 5. --inetd: the shared slot file follows --tmp-dir, else TMPDIR"
mkdir -p "$T/scr2" "$T/tmp2"
rm -f "$T/tmp/boltccd-slots-$uid"
"$BOLTCCD" --inetd --tmp-dir "$T/scr2" --no-cache </dev/null >/dev/null 2>&1
check "--inetd --tmp-dir: slot file in --tmp-dir" [ -f "$T/scr2/boltccd-slots-$uid" ]
check "... not in TMPDIR" [ ! -e "$T/tmp/boltccd-slots-$uid" ]
TMPDIR="$T/tmp2" "$BOLTCCD" --inetd --no-cache </dev/null >/dev/null 2>&1
check "--inetd without --tmp-dir: slot file in TMPDIR" [ -f "$T/tmp2/boltccd-slots-$uid" ]
finish
