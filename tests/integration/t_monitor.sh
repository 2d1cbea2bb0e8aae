#!/bin/sh
# t_monitor.sh - watching the farm during a build of slow compiles
# (tests/cluster/fakecc, 8 s each) through a loopback boltccd with two
# slots, plus a host that is down:
#  * boltccd's /stats.json lists the jobs now (file, client, compiler,
#    mode, state, seconds) and its text page too, after distccd's block;
#    a file name with an accent stays valid UTF-8 JSON;
#  * boltcc --monitor --once: the host up with its slot bar and the two
#    files compiling there, the other host down with the reason, this
#    machine's jobs; nothing wider than 80 columns;
#  * boltcc --monitor in an 80x24 tmux pane: the same, refreshed (its
#    clock moves), q quits and gives the terminal back;
#  * Debian's distccmon-text shows the jobs from boltcc's state files;
#  * boltcc --monitor --web PORT: /farm.json, headless Chromium's DOM
#    shows the host and the files (--dump-dom), a screenshot is saved
#    (t_monitor.png in the build dir, to look at), POST is refused (405),
#    an unknown path is 404;
#  * after the build: no job listed, no state file left, the history
#    counts the compiles.
. "$(dirname "$0")/lib.sh"
BOLTCC_LOCAL_CACHE_SIZE=0	# every job goes to the farm
export BOLTCC_LOCAL_CACHE_SIZE
need_binaries
need_tool tmux
FAKECC="$BOLTCC_BUILDDIR/tests/cluster/fakecc"
[ -x "$FAKECC" ] || skip "$FAKECC not built (make check builds it)"
mkdir -p "$T/bin" "$T/src" || die "mkdir"
ln -s "$FAKECC" "$T/bin/fakecc" || die "symlink"
PATH="$T/bin:$PATH"
export PATH

start_boltccd --jobs 2 --allow-compiler fakecc || die "boltccd"
DOWN=$(freeports 1)
BOLTCC_DIR=$(new_client_dir)
BOLTCC_HOSTS="127.0.0.1:$DPORT/2 127.0.0.1:$DOWN"
export BOLTCC_DIR BOLTCC_HOSTS
cd "$T/src" || die "cd"
ACC=$(printf 'caf\303\251')	# "café", UTF-8
printf 'int slow_one(void) { return 1; }\n' >slow_one.c
printf 'int two(void) { return 2; }\n' >"${ACC}_two.c"

# get PORT PATH: the body of an HTTP answer (status line and headers cut)
get() {
	$PYTHON - "$1" "$2" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), timeout=5) as r:
        sys.stdout.buffer.write(r.read())
except Exception as e:
    print("error: %s" % e)
EOF
}
# status PORT PATH METHOD: the HTTP status
status() {
	$PYTHON - "$1" "$2" "$3" <<'EOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), method=sys.argv[3], data=b"" if sys.argv[3] == "POST" else None)
try:
    with urllib.request.urlopen(req, timeout=5) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
except Exception as e:
    print("error: %s" % e)
EOF
}
"$BOLTCC" fakecc -DFAKECC_MS=8000 -c slow_one.c -o slow_one.o \
	>"$T/c1.out" 2>&1 &
C1=$!
"$BOLTCC" fakecc -DFAKECC_MS=8000 -c "${ACC}_two.c" -o two.o \
	>"$T/c2.out" 2>&1 &
C2=$!
_PIDS="$_PIDS $C1 $C2"

compiling_two() {
	get "$DSPORT" /stats.json >"$T/stats.json"
	[ "$(grep -o '"state":"compiling"' "$T/stats.json" | wc -l)" -eq 2 ]
}
wait_until 20 compiling_two || fail "two jobs never compiled at once"

# --- the daemon's pages ----------------------------------------------------
$PYTHON - "$T/stats.json" "$ACC" >"$T/jobs.txt" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
for j in d["active_jobs"]:
    print(j["state"], j["mode"], j["compiler"], j["client"].split(":")[0], j["file"], j["seconds"] >= 0)
print("throughput", "jobs_per_second" in d["throughput"], len(d["history"]["done"]))
EOF
check "stats.json is JSON and lists slow_one.c compiling (bolt, fakecc, from 127.0.0.1)" \
	grep -q '^compiling bolt fakecc 127.0.0.1 slow_one.c True$' "$T/jobs.txt"
check "stats.json keeps the accented name as UTF-8" \
	grep -q "^compiling bolt fakecc 127.0.0.1 ${ACC}_two.c True$" "$T/jobs.txt"
check "stats.json: throughput and a 90-point history" \
	grep -q '^throughput True 90$' "$T/jobs.txt"
get "$DSPORT" / >"$T/page.txt"
check "text page: distccd's block, then the jobs" \
	sh -c "sed -n '/^<\/distccstats>/,\$p' '$T/page.txt' | grep -q '^job compiling [0-9.]* bolt 127.0.0.1:[0-9]* fakecc slow_one.c$'"

# --- --monitor --once --------------------------------------------------------
"$BOLTCC" --monitor --once >"$T/once.txt" 2>&1
check "--monitor --once exits 0" test $? -eq 0
check "--once: the host up with both slots busy" \
	grep -q "^127.0.0.1:$DPORT/2 *up *\[########\] 2/2" "$T/once.txt"
check "--once: slow_one.c compiling there" \
	grep -q '^    slow_one.c *compiling .* bolt *127.0.0.1:' "$T/once.txt"
check "--once: the accented file" grep -q "^    ${ACC}_two.c " "$T/once.txt"
# down, or backed off if a client tried it: either way with the reason
check "--once: the other host down or backed off, with the reason" \
	sh -c "grep -q '^127.0.0.1:$DOWN *\(down\|backoff\)\$' '$T/once.txt' &&
	    grep -q '^    \(backoff until [0-9:]*: .*\)\?cannot connect to 127.0.0.1:' '$T/once.txt'"
check "--once: this machine's two jobs (from the state files)" \
	grep -q '^this machine: 2 jobs$' "$T/once.txt"
check "--once: the farm summary" \
	grep -q '^farm: slots 2/2 busy, ' "$T/once.txt"
# the table's lines fit in 80 columns (a reason line may be longer: it
# is cut in a terminal, whole in plain output)
wide=$(grep -v '^    backoff\|^    cannot\|^    probe' "$T/once.txt" |
	$PYTHON -c 'import sys; print(sum(len(l.rstrip("\n")) > 80 for l in sys.stdin.buffer.read().decode().splitlines()))')
check "--once: the table fits in 80 columns" test "$wide" -eq 0

# --- distccmon-text -------------------------------------------------------------
if command -v distccmon-text >/dev/null 2>&1; then
	DISTCC_DIR=$BOLTCC_DIR timeout 3 distccmon-text >"$T/distccmon.txt" 2>&1
	check "distccmon-text shows slow_one.c compiling on 127.0.0.1" \
		grep -q 'Compile *slow_one.c *127.0.0.1\[' "$T/distccmon.txt"
else
	note "distccmon-text not installed: skipped"
fi

# --- the terminal view under tmux -------------------------------------------------
SOCK="$T/tmux.sock"
tmux -S "$SOCK" new-session -d -s mon -x 80 -y 24 \
	"env BOLTCC_DIR='$BOLTCC_DIR' BOLTCC_HOSTS='$BOLTCC_HOSTS' '$BOLTCC' --monitor; echo monitor-exit=\$?; sleep 30" ||
	die "tmux"
tmux_shows() {
	tmux -S "$SOCK" capture-pane -p -t mon >"$T/pane.txt" 2>/dev/null &&
		grep -q "$1" "$T/pane.txt"
}
check "tmux: the monitor shows the host" \
	wait_until 10 tmux_shows "^127.0.0.1:$DPORT/2 *up"
check "tmux: ... slow_one.c compiling" wait_until 5 tmux_shows '^    slow_one.c *compiling'
check "tmux: ... the accented file" wait_until 5 tmux_shows "^    ${ACC}_two.c"
check "tmux: ... the host down or backed off" \
	wait_until 5 tmux_shows "^127.0.0.1:$DOWN *\(down\|backoff\)"
check "tmux: ... a job's line whole in 80 columns (it ends with the client)" \
	wait_until 5 tmux_shows '^    slow_one.c .* 127.0.0.1:[0-9]*$' 
check "tmux: ... and how to quit" wait_until 5 tmux_shows '^q: quit'
first=$(sed -n 's/^boltcc monitor  \([0-9:]*\) .*/\1/p' "$T/pane.txt")
moved() {
	tmux_shows '^boltcc monitor' &&
	[ "$(sed -n 's/^boltcc monitor  \([0-9:]*\) .*/\1/p' "$T/pane.txt")" != "$first" ]
}
check "tmux: it refreshes (its clock moves)" wait_until 5 moved
cp "$T/pane.txt" "$T/pane-live.txt"
tmux -S "$SOCK" send-keys -t mon q
check "tmux: q quits with status 0" wait_until 5 tmux_shows '^monitor-exit=0'
check "tmux: the terminal is back (the view is gone)" \
	sh -c "! grep -q '^q: quit' '$T/pane.txt'"
tmux -S "$SOCK" kill-server 2>/dev/null

# --- the web page ------------------------------------------------------------------
WPORT=$(freeports 1)
"$BOLTCC" --monitor --web "127.0.0.1:$WPORT" >"$T/web.log" 2>&1 &
WPID=$!
_PIDS="$_PIDS $WPID"
web_up() { [ "$(status "$WPORT" / GET)" = 200 ]; }
check "--web: serves its page" wait_until 10 web_up
get "$WPORT" /farm.json >"$T/farm.json"
$PYTHON - "$T/farm.json" >"$T/farm.txt" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
for h in d["hosts"]:
    print(h["host"], h["state"], h["running"], h["slots"], sorted(j["file"] for j in h["jobs"]))
print("mine", len(d["this_machine"]))
EOF
check "farm.json: the host, both slots busy, both files" \
	grep -q "^127.0.0.1:$DPORT/2 up 2 2 \['caf.*_two.c', 'slow_one.c'\]$" "$T/farm.txt"
check "farm.json: the host down or backed off" \
	grep -q "^127.0.0.1:$DOWN \(down\|backoff\) " "$T/farm.txt"
check "--web: POST is refused (405)" test "$(status "$WPORT" / POST)" = 405
check "--web: an unknown path is 404" test "$(status "$WPORT" /nope GET)" = 404
if command -v chromium >/dev/null 2>&1; then
	CHROME="chromium --headless --no-sandbox --disable-gpu --no-first-run
		--user-data-dir=$T/chrome --virtual-time-budget=4000"
	# shellcheck disable=SC2086
	timeout 60 $CHROME --dump-dom "http://127.0.0.1:$WPORT/" \
		>"$T/dom.html" 2>"$T/chrome.log"
	check "chromium: the page names the host" \
		grep -q "127.0.0.1:$DPORT/2" "$T/dom.html"
	check "chromium: ... and the files compiling there" \
		sh -c "grep -q '<td class=\"file\">slow_one.c</td>' '$T/dom.html' &&
		    grep -q '<td class=\"file\">${ACC}_two.c</td>' '$T/dom.html'"
	check "chromium: ... two busy slots" \
		test "$(grep -o 'class="slot busy"' "$T/dom.html" | wc -l)" -ge 2
	check "chromium: ... both charts drawn" \
		test "$(grep -o '<polyline' "$T/dom.html" | wc -l)" -ge 1
	# shellcheck disable=SC2086
	timeout 60 $CHROME --window-size=1100,800 \
		--screenshot="$T/monitor.png" "http://127.0.0.1:$WPORT/" \
		>>"$T/chrome.log" 2>&1
	check "chromium: a screenshot" test -s "$T/monitor.png"
	cp "$T/monitor.png" "$BOLTCC_BUILDDIR/t_monitor.png" 2>/dev/null &&
		note "screenshot: $BOLTCC_BUILDDIR/t_monitor.png"
else
	note "chromium not installed: the page was not rendered"
fi

# --- after the build -----------------------------------------------------------------
wait "$C1"
r1=$?
wait "$C2"
r2=$?
check "both compiles succeeded" test "$r1$r2" = 00
check "... on the farm" sh -c "grep -q FAKECC-OBJECT slow_one.o"
idle() {
	get "$DSPORT" /stats.json >"$T/stats2.json"
	grep -q '"active_jobs":\[\]' "$T/stats2.json"
}
check "stats.json: no job listed once they are done" wait_until 10 idle
check "the history counts the two compiles" \
	sh -c "$PYTHON -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if sum(d[\"history\"][\"done\"]) >= 2 else 1)' '$T/stats2.json'"
check "no state file left" \
	sh -c "! ls '$BOLTCC_DIR/state' | grep -q binstate_"
"$BOLTCC" --monitor --once >"$T/once2.txt" 2>&1
check "--once after the build: no job on the host" \
	sh -c "! grep -q ' compiling ' '$T/once2.txt'"
kill "$WPID" 2>/dev/null
check "--monitor --web stops on SIGTERM" wait_until 5 sh -c "! kill -0 $WPID 2>/dev/null"
"$BOLTCC" --monitor --web nonsense >"$T/bad.txt" 2>&1
check "--web with a bad port: exit 101 naming it" \
	sh -c "test $? -eq 101 && grep -q \"'nonsense' is not\" '$T/bad.txt'"
finish
