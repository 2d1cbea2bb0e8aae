#!/bin/sh
# t_fallback.sh - the build never fails because of the farm:
#  1. sample project, make -j4 through boltcc, host list = dead port first,
#     live boltccd second: build succeeds, program output as expected,
#     `boltcc --stats --json` counts the failed attempts;
#  2. a daemon killed with SIGKILL in the middle of a build: the build still
#     succeeds and the program runs;
#  3. DISTCC_FALLBACK=0 with only dead hosts: exit 116, no object;
#  4. a state dir set explicitly but missing: clear error naming it;
#  5. a bad host list ("box,cpp"): clear error naming it;
#  6. --show-hosts: each host's kind, slots held, probe result and state
#     (up; backoff until when, and why, after a failed job), also --json.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc make
write_sources
start_boltccd || die "cannot start boltccd"
LIVE=$DPORT
LIVE_SPORT=$DSPORT
set -- $(freeports 1)
DEAD=$1

stats_json() {
	BOLTCC_DIR="$1" "$BOLTCC" --stats --json >"$T/stats.json" 2>"$T/stats.err"
	_rc=$?
	if [ $_rc -ne 0 ]; then
		fail "boltcc --stats --json exited $_rc: $(head -c 200 "$T/stats.err")"
		return 1
	fi
	if ! $PYTHON -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/stats.json" 2>/dev/null; then
		fail "boltcc --stats --json is not valid JSON: $(head -c 200 "$T/stats.json")"
		return 1
	fi
	return 0
}

# sum of the numeric JSON fields whose name contains WORD
json_sum() {
	$PYTHON - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
tot = 0
def walk(o, path=""):
    global tot
    if isinstance(o, dict):
        for k, v in o.items():
            walk(v, path + "." + k)
    elif isinstance(o, list):
        for v in o:
            walk(v, path)
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        if sys.argv[2] in path.lower():
            tot += o
walk(d)
print(int(tot))
EOF
}

log "--- 1. dead host first, live boltccd second, make -j4"
cp -R "$BOLTCC_SRCDIR/sample" "$T/s1"
rm -f "$T"/s1/*.o "$T"/s1/*.d "$T/s1/calc"
C1=$(new_client_dir)
before=$(dstat "$DSPORT" dcc_compile_ok)
BOLTCC_DIR="$C1" BOLTCC_HOSTS="127.0.0.1:$DEAD,bolt 127.0.0.1:$LIVE,bolt" \
	timeout 180 make -C "$T/s1" -j4 CC="$BOLTCC gcc" >"$T/make1.log" 2>&1
rc=$?
after=$(dstat_above "$DSPORT" dcc_compile_ok "$before")
check "1: build succeeded (make exit $rc)" [ $rc -eq 0 ]
[ $rc -ne 0 ] && tail -n 15 "$T/make1.log"
check "1: program output as expected" sh -c "'$T/s1/calc' | cmp -s - '$T/s1/expected.txt'"
check "1: live daemon compiled jobs (dcc_compile_ok $before -> $after)" [ "$after" -gt "$before" ]
if stats_json "$C1"; then
	pass "1: boltcc --stats --json is valid JSON"
	sed 's/^/    /' "$T/stats.json" | head -n 30
	f=$(json_sum "$T/stats.json" fail)
	b=$(json_sum "$T/stats.json" fallback)
	check "1: failed host attempts or fallbacks counted (fail=$f fallback=$b)" [ $((f + b)) -gt 0 ]
fi

log "--- 2. the only daemon is killed with SIGKILL mid-build"
start_boltccd || die "cannot start the second boltccd"
VICTIM=$DPID
cp -R "$BOLTCC_SRCDIR/sample" "$T/s2"
rm -f "$T"/s2/*.o "$T"/s2/*.d "$T/s2/calc"
# Extra, slower translation units so the build lasts a few seconds.
$PYTHON - "$T/s2" <<'EOF'
import sys
d = sys.argv[1]
for k in range(12):
    with open("%s/gen%02d.c" % (d, k), "w") as f:
        for i in range(40):
            f.write("unsigned g%d_%d(unsigned x, unsigned y);\n"
                    "unsigned g%d_%d(unsigned x, unsigned y)\n{\n"
                    "\tunsigned i, a = x;\n\tfor (i = 0; i < y; i++) {\n"
                    "\t\ta = a * %du + (a >> %d) + i;\n"
                    "\t\tif (a %% %d == 1)\n\t\t\ta ^= y << %d;\n\t}\n"
                    "\treturn a;\n}\n"
                    % (k, i, k, i, 2 * i + 3, i % 13 + 1, i + 7, i % 7 + 1))
EOF
SRCS="main.c lexer.c parser.c ast.c eval.c env.c builtins.c arena.c strbuf.c script.c"
for k in 00 01 02 03 04 05 06 07 08 09 10 11; do SRCS="$SRCS gen$k.c"; done
C2=$(new_client_dir)
BOLTCC_DIR="$C2" BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt" \
	timeout 300 make -C "$T/s2" -j4 CC="$BOLTCC gcc" SRCS="$SRCS" >"$T/make2.log" 2>&1 &
MAKEPID=$!
i=0
while [ $i -lt 300 ]; do
	[ "$(dstat "$DSPORT" dcc_compile_ok)" -ge 2 ] && break
	alive $MAKEPID || break
	sleep 0.05
	i=$((i + 1))
done
done_before=$(dstat "$DSPORT" dcc_compile_ok)
kill -KILL "$VICTIM" 2>/dev/null
note "killed boltccd (pid $VICTIM) after $done_before jobs"
wait $MAKEPID
rc=$?
check "2: build succeeded after the daemon was killed (make exit $rc)" [ $rc -eq 0 ]
[ $rc -ne 0 ] && tail -n 15 "$T/make2.log"
check "2: program output as expected" sh -c "'$T/s2/calc' | cmp -s - '$T/s2/expected.txt'"
check "2: some jobs ran remotely before the kill ($done_before)" [ "$done_before" -ge 1 ]
if stats_json "$C2"; then
	b=$(json_sum "$T/stats.json" fallback)
	f=$(json_sum "$T/stats.json" fail)
	check "2: fallbacks counted in --stats --json (fallback=$b fail=$f)" [ "$b" -gt 0 ]
fi

log "--- 2b. a hung host (accepts, never answers) first, live boltccd second"
set -- $(freeports 1)
HUNG=$1
$DCC blackhole "$HUNG" &
_PIDS="$_PIDS $!"
$DCC wait-port "$HUNG" 10 || fail "2b: blackhole did not start"
cd "$T/src" || die "no src"
k=0
src=$(variant hung$k)
gcc -O2 -g0 -c "$src" -o hl.o
for spec in "$HUNG,bolt" "$HUNG,distcc" "$HUNG"; do
	rm -f hr.o
	CH=$(new_client_dir)
	before=$(dstat "$LIVE_SPORT" dcc_compile_ok)
	t0=$(date +%s)
	BOLTCC_DIR="$CH" BOLTCC_HOSTS="127.0.0.1:$spec 127.0.0.1:$LIVE,bolt" \
		DISTCC_IO_TIMEOUT=2 DISTCC_FALLBACK=0 \
		timeout 60 "$BOLTCC" gcc -O2 -g0 -c "$src" -o hr.o 2>"$T/err2b.txt"
	rc=$?
	secs=$(($(date +%s) - t0))
	after=$(dstat_above "$LIVE_SPORT" dcc_compile_ok "$before")
	check "2b: hung '$spec' then live: exit 0 in ${secs}s (got $rc)" [ $rc -eq 0 ]
	check "2b: hung '$spec': gave up on it within DISTCC_IO_TIMEOUT (2 s) + slack (${secs}s)" [ "$secs" -le 10 ]
	check "2b: hung '$spec': the live daemon compiled it ($before -> $after)" [ "$after" -gt "$before" ]
	check "2b: hung '$spec': object identical to local" same_file hl.o hr.o
	sed 's/^/    stderr: /' "$T/err2b.txt" | head -n 2
	# the live daemon's cache would answer a repeat: next round, new source
	k=$((k + 1))
	src=$(variant "hung$k")
	gcc -O2 -g0 -c "$src" -o hl.o
done

log "--- 2c. a hung host declared ,bolt: the heartbeat limit, not DISTCC_IO_TIMEOUT"
rm -f hr.o
t0=$(date +%s)
BOLTCC_DIR=$(new_client_dir) BOLTCC_HOSTS="127.0.0.1:$HUNG,bolt" \
	DISTCC_IO_TIMEOUT=120 timeout 100 "$BOLTCC" gcc -O2 -g0 -c "$src" \
	-o hr.o 2>"$T/err2c.txt"
rc=$?
secs=$(($(date +%s) - t0))
check "2c: compiled locally after the hung ,bolt host (exit $rc)" [ $rc -eq 0 ]
check "2c: gave up within the 10 s heartbeat limit + slack, not 120 s (${secs}s)" [ "$secs" -le 25 ]
check "2c: object identical to local" same_file hl.o hr.o
sed 's/^/    stderr: /' "$T/err2c.txt" | head -n 2

log "--- 3. DISTCC_FALLBACK=0 with only dead hosts"
cd "$T/src" || die "no src"
C3=$(new_client_dir)
rm -f nf.o
BOLTCC_DIR="$C3" BOLTCC_HOSTS="127.0.0.1:$DEAD,bolt" DISTCC_FALLBACK=0 \
	timeout 60 "$BOLTCC" gcc -c hello.c -o nf.o 2>"$T/err3.txt"
rc=$?
check "3: exit 116 (got $rc)" [ $rc -eq 116 ]
check "3: no object written" [ ! -e nf.o ]
check "3: says why on stderr" [ -s "$T/err3.txt" ]
sed 's/^/    stderr: /' "$T/err3.txt" | head -n 3
# plain DISTCC_HOSTS, stock-style host
BOLTCC_DIR="$C3" DISTCC_HOSTS="127.0.0.1:$DEAD" DISTCC_FALLBACK=0 \
	timeout 60 "$BOLTCC" gcc -c hello.c -o nf.o 2>/dev/null
rc=$?
check "3: same through DISTCC_HOSTS (exit $rc)" [ $rc -eq 116 ]

log "--- 4. state dir set but missing"
for var in BOLTCC_DIR DISTCC_DIR; do
	rm -f md.o
	env "$var=$T/does/not/exist" BOLTCC_HOSTS="127.0.0.1:$LIVE,bolt" \
		timeout 60 "$BOLTCC" gcc -c hello.c -o md.o 2>"$T/err4.txt"
	rc=$?
	note "$var missing: exit $rc: $(head -n 1 "$T/err4.txt")"
	check "4: $var missing: error names the directory" grep -q "$T/does/not/exist" "$T/err4.txt"
done

log "--- 5. bad host list"
C5=$(new_client_dir)
BOLTCC_DIR="$C5" BOLTCC_HOSTS="box,cpp" timeout 30 "$BOLTCC" --show-hosts >"$T/out5.txt" 2>"$T/err5.txt"
rc=$?
note "--show-hosts with 'box,cpp': exit $rc: $(head -n 1 "$T/err5.txt")"
check "5: --show-hosts fails on 'box,cpp' (exit $rc)" [ $rc -ne 0 ]
check "5: error names the bad entry" grep -q 'box,cpp\|,cpp' "$T/err5.txt"
rm -f bh.o
BOLTCC_DIR="$C5" BOLTCC_HOSTS="box,cpp" timeout 60 "$BOLTCC" gcc -c hello.c -o bh.o 2>"$T/err5b.txt"
rc=$?
note "compile with 'box,cpp': exit $rc: $(head -n 1 "$T/err5b.txt")"
check "5: a compile with that list says so on stderr" grep -q 'box,cpp\|,cpp' "$T/err5b.txt"

log "--- 6. --show-hosts: each host's state"
C6=$(new_client_dir)
H6="127.0.0.1:$DEAD,bolt 127.0.0.1:$LIVE localhost/3"
show6() {
	BOLTCC_DIR="$C6" BOLTCC_HOSTS="$H6" "$BOLTCC" --show-hosts "$@"
}
show6 >"$T/sh6a.txt" 2>&1
check "6: fresh: 3 lines, all up, no slot held" sh -c \
	"[ \$(wc -l <'$T/sh6a.txt') = 3 ] && [ \$(grep -c ' slots 0/[34] .* up\$' '$T/sh6a.txt') = 3 ]"
check "6: fresh: the dead ,bolt host: tcp, boltccd (declared)" grep -Eq \
	"^127\.0\.0\.1:$DEAD,bolt +tcp +slots 0/4 +boltccd \(declared\) +up\$" "$T/sh6a.txt"
check "6: fresh: the undeclared host is not probed" grep -Eq \
	"^127\.0\.0\.1:$LIVE +tcp +slots 0/4 +not probed +up\$" "$T/sh6a.txt"
check "6: fresh: localhost/3" grep -Eq \
	"^localhost/3 +localhost +slots 0/3 +local +up\$" "$T/sh6a.txt"
sed 's/^/    /' "$T/sh6a.txt"
# a failed job on the dead host (fallback: local), then one on the live
# host, which probes it
rm -f s6a.o s6b.o
BOLTCC_DIR="$C6" BOLTCC_HOSTS="127.0.0.1:$DEAD,bolt" DISTCC_FALLBACK=1 \
	timeout 60 "$BOLTCC" gcc -c hello.c -o s6a.o 2>/dev/null
check "6: the job on the dead host fell back to a local compile" test -s s6a.o
BOLTCC_DIR="$C6" BOLTCC_HOSTS="127.0.0.1:$LIVE" DISTCC_FALLBACK=0 \
	timeout 60 "$BOLTCC" gcc -c warn.c -o s6b.o 2>/dev/null
check "6: the job on the live host ran there" test -s s6b.o
# another boltcc holds one slot of the live host
$PYTHON - "$C6/lock/cpu_tcp_127.0.0.1_${LIVE}_0" "$T/s6.held" "$T/s6.stop" <<'EOF' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
open(sys.argv[2], "w").close()
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
EOF
HOLDER=$!
_PIDS="$_PIDS $HOLDER"
i=0
while [ ! -e "$T/s6.held" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
now=$(date +%s)
show6 >"$T/sh6b.txt" 2>&1
show6 --json >"$T/sh6b.json" 2>&1
: >"$T/s6.stop"
wait $HOLDER 2>/dev/null
sed 's/^/    /' "$T/sh6b.txt"
check "6: the dead host is in backoff until a local RFC 3339 time, with the reason" grep -Eq \
	"^127\.0\.0\.1:$DEAD,bolt +tcp +slots 0/4 +boltccd \(declared\) +backoff until [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2} \((probe-)?connect: .*127\.0\.0\.1:$DEAD" \
	"$T/sh6b.txt"
check "6: the live host: probed as boltccd, one slot held, up" grep -Eq \
	"^127\.0\.0\.1:$LIVE +tcp +slots 1/4 +boltccd \(probed\) +up\$" "$T/sh6b.txt"
check "6: --json: the same states, backoff until ~60 s from now" \
	$PYTHON - "$T/sh6b.json" "$now" "$DEAD" "$LIVE" <<'EOF'
import json, sys
from datetime import datetime
d = json.load(open(sys.argv[1]))
now, dead, live = int(sys.argv[2]), sys.argv[3], sys.argv[4]
h = {x["spec"]: x for x in d["hosts"]}
a = h["127.0.0.1:%s,bolt" % dead]
b = h["127.0.0.1:%s" % live]
c = h["localhost/3"]
until = datetime.fromisoformat(a["backoff_until"]).timestamp()
ok = (a["state"] == "backoff" and a["server"] == "boltccd"
      and a["known_by"] == "declared" and "connect" in a["backoff_reason"]
      and now + 50 <= until <= now + 61 and a["kind"] == "tcp"
      and b["state"] == "up" and b["server"] == "boltccd"
      and b["known_by"] == "probed" and b["slots_used"] == 1
      and b["slots"] == 4 and "backoff_until" not in b
      and c["kind"] == "localhost" and c["slots"] == 3
      and c["state"] == "up")
if not ok:
    print(json.dumps(d, indent=1))
sys.exit(0 if ok else 1)
EOF
BOLTCC_DIR="$C6" BOLTCC_HOSTS="$H6" DISTCC_BACKOFF_PERIOD=0 "$BOLTCC" \
	--show-hosts >"$T/sh6c.txt" 2>&1
check "6: DISTCC_BACKOFF_PERIOD=0: no host is backed off" sh -c \
	"[ \$(grep -c ' up\$' '$T/sh6c.txt') = 3 ]"
BOLTCC_DIR="$C6" BOLTCC_HOSTS="$H6" "$BOLTCC" --show-hosts --bogus \
	>/dev/null 2>&1
rc=$?
check "6: --show-hosts with a stray argument: usage error (exit $rc)" [ $rc -eq 101 ]

finish
