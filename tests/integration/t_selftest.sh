#!/bin/sh
# t_selftest.sh - boltccd --self-test:
#  1. on this machine: exit 0, one "ok" line per check and a summary; it
#     leaves no file in the scratch dir and no daemon running;
#  2. a `cc` on PATH that exits 1: exit 1, a FAIL line naming the compiler;
#  3. a --cache-dir that cannot be created (under a regular file): exit 1,
#     a FAIL line naming the cache, the other checks still ok;
#  4. a --cache-dir that exists: checked without being changed.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool cc

# selftest OUT ARGS...: run it, its exit status in $rc
selftest() {
	_o=$1; shift
	"$BOLTCCD" --self-test "$@" >"$T/$_o" 2>"$T/$_o.err"
	rc=$?
	sed 's/^/    | /' "$T/$_o"
}
# the lines of checks (all but the summary)
check_lines() { grep -v '^boltccd --self-test: ' "$T/$1"; }
# nothing of a run left in the scratch dir ($TMPDIR)
scratch_empty() { [ -z "$(ls -A "$TMPDIR")" ]; }
# the test daemon of the service check stopped
daemon_gone() {
	_p=$(sed -n 's/^ok   service: .* (pid \([0-9]*\)).*/\1/p' "$T/$1")
	[ -n "$_p" ] && ! kill -0 "$_p" 2>/dev/null
}

log "--- 1. this install"
selftest st1.out
check "exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "four check lines" [ "$(check_lines st1.out | wc -l)" -eq 4 ]
check "every check line is ok" [ -z "$(check_lines st1.out | grep -v '^ok   ')" ]
for c in sha256 compiler cache service; do
	check "a line for $c" grep -q "^ok   $c: " "$T/st1.out"
done
check "summary says all passed" grep -q '^boltccd --self-test: all 4 checks passed' "$T/st1.out"
check "the object was compared with the local compile" grep -q '^ok   service: .*the same [0-9]* bytes as the local compile' "$T/st1.out"
check "nothing on stderr ($(head -c 200 "$T/st1.out.err"))" [ ! -s "$T/st1.out.err" ]
check "nothing left in the scratch dir" scratch_empty
check "the test daemon was stopped" daemon_gone st1.out

log "--- 2. a cc that fails"
mkdir -p "$T/fakebin"
printf '#!/bin/sh\nexit 1\n' >"$T/fakebin/cc"
chmod +x "$T/fakebin/cc"
PATH="$T/fakebin:$PATH" selftest st2.out
check "exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "FAIL line names the compiler" grep -q "^FAIL compiler: 'cc' ($T/fakebin/cc) exited with status 1" "$T/st2.out"
check "sha256 still ok" grep -q '^ok   sha256: ' "$T/st2.out"
check "summary says it failed" grep -q '^boltccd --self-test: [0-9] of 4 checks failed' "$T/st2.out"
check "nothing left in the scratch dir" scratch_empty

log "--- 3. a --cache-dir that cannot be created"
: >"$T/afile"
selftest st3.out --cache-dir "$T/afile/cache"
check "exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "FAIL line names the cache dir and why" grep -q "^FAIL cache: --cache-dir $T/afile/cache cannot be created: $T/afile is not a directory" "$T/st3.out"
check "exactly one FAIL line" [ "$(grep -c '^FAIL ' "$T/st3.out")" -eq 1 ]
check "summary: 1 of 4 failed" grep -q '^boltccd --self-test: 1 of 4 checks failed' "$T/st3.out"
check "nothing left in the scratch dir" scratch_empty

log "--- 4. an existing --cache-dir is only read"
"$BOLTCCD" --cache-check --cache-dir "$T/cache" >/dev/null 2>&1
ls -A "$T/cache" | sort >"$T/cache.before"
selftest st4.out --cache-dir "$T/cache"
ls -A "$T/cache" | sort >"$T/cache.after"
check "exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "cache line names the dir and its index" grep -q "^ok   cache: --cache-dir $T/cache: index opens, 0 entries" "$T/st4.out"
"$BOLTCCD" --cache-check --cache-dir "$T/cache" >"$T/cc.txt" 2>&1
check "no entry added to it: $(cat "$T/cc.txt")" grep -q ': 0 entries, 0 bytes;.*consistent' "$T/cc.txt"
# sqlite's -wal file may appear (opening the index, as --cache-check does)
added=$(comm -13 "$T/cache.before" "$T/cache.after" | grep -v '^index.sqlite-wal$')
check "no file left in it${added:+ (new: $added)}" [ -z "$added" ]
check "nothing left in the scratch dir" scratch_empty
finish
