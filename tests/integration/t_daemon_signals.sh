#!/bin/sh
# t_daemon_signals.sh - daemon life cycle:
#  1. SIGTERM while a job is running: the job finishes or fails explicitly,
#     the daemon exits 0 within a bounded time, the pid file is removed;
#  2. SIGHUP reopens the log file (rename, HUP, new lines in the new file);
#  3. --inetd: a request on stdin, the reply on stdout;
#  4. stats port: distccd's text page with distccd's field names,
#     /stats.json valid JSON, /metrics in Prometheus text format;
#  5. a soft open-files limit of 256 is raised (to 8192 or the hard limit).
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
write_sources
cd "$T/src" || die "no src"

# A slow translation unit (a second or two at -O2) and a small one.
$PYTHON - <<'EOF'
with open("slow.c", "w") as f:
    for i in range(160):
        f.write("unsigned s%d(unsigned x, unsigned y);\n"
                "unsigned s%d(unsigned x, unsigned y)\n{\n"
                "\tunsigned i, a = x;\n\tfor (i = 0; i < y; i++) {\n"
                "\t\ta = a * %du + (a >> %d) + i;\n"
                "\t\tif (a %% %d == 1)\n\t\t\ta ^= y << %d;\n\t}\n"
                "\treturn a;\n}\n"
                % (i, i, 2 * i + 3, i % 13 + 1, i + 7, i % 7 + 1))
EOF
gcc -E slow.c >slow.i && gcc -E hello.c >hello.i || die "gcc -E"
$DCC build --proto 1 --doti slow.i -- gcc -O2 -c slow.c -o slow.o >"$T/slow.bin"
$DCC build --proto 2 --doti hello.i -- gcc -O2 -c hello.c -o hello.o >"$T/good.bin"

log "--- 1. SIGTERM during a job"
start_boltccd --pid-file "$T/d.pid" || die "cannot start boltccd"
i=0
while [ ! -s "$T/d.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "pid file written with the daemon's pid" [ "$(cat "$T/d.pid" 2>/dev/null)" = "$DPID" ]
$DCC replay "$DPORT" "$T/slow.bin" --out "$T/slow-reply.bin" --timeout 60 2>"$T/slow.txt" &
RPID=$!
sleep 0.6
t0=$(date +%s)
kill -TERM "$DPID"
i=0
while alive "$DPID" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if alive "$DPID"; then
	fail "daemon still running 30 s after SIGTERM"
	kill -KILL "$DPID"
fi
wait "$DPID"
rc=$?
secs=$(($(date +%s) - t0))
check "daemon exited with status 0 after SIGTERM (got $rc, ${secs}s)" [ $rc -eq 0 ]
check "daemon exited within 20 s of SIGTERM (${secs}s)" [ "$secs" -le 20 ]
wait $RPID
note "in-flight job: $(cat "$T/slow.txt")"
if [ -s "$T/slow-reply.bin" ]; then
	if $DCC check-reply "$T/slow-reply.bin" --proto 1 --expect-stat any >"$T/c.txt"; then
		pass "in-flight job got a complete reply: $(head -n 1 "$T/c.txt")"
	else
		fail "in-flight job got a broken reply: $(cat "$T/c.txt")"
	fi
else
	if grep -Eqi 'shut|terminat|abort|cancel|signal|kill' "$DLOG"; then
		pass "in-flight job closed without reply; log says: $(grep -Ei 'shut|terminat|abort|cancel|signal|kill' "$DLOG" | tail -n 1 | cut -c1-140)"
	else
		fail "in-flight job dropped without a reply or a log line"
	fi
fi
check "pid file removed on exit" [ ! -e "$T/d.pid" ]

log "--- 2. SIGHUP reopens the log file"
start_boltccd || die "cannot start boltccd"
$DCC replay "$DPORT" "$T/good.bin" --out "$T/r1.bin" 2>/dev/null
mv "$DLOG" "$DLOG.old"
kill -HUP "$DPID"
sleep 0.5
check "daemon alive after SIGHUP" alive "$DPID"
old_lines=$(wc -l <"$DLOG.old")
$DCC replay "$DPORT" "$T/good.bin" --out "$T/r2.bin" 2>/dev/null
sleep 0.3
check "job after SIGHUP compiled" $DCC check-reply "$T/r2.bin" --proto 2 --quiet
check "new log file created after SIGHUP" [ -s "$DLOG" ]
check "nothing more written to the renamed file" [ "$(wc -l <"$DLOG.old")" -eq "$old_lines" ]

log "--- 3. --inetd"
for req in "$T/good.bin:2" "$VECTORS/p1-request.bin:1"; do
	f=${req%:*}
	proto=${req##*:}
	[ -f "$f" ] || { note "$f not present"; continue; }
	# stdin stays open until the reply is read, as under ssh
	$DCC inetd "$f" --out "$T/inetd-reply.bin" -- \
		"$BOLTCCD" --inetd --log-file "$T/inetd.log" --cache-dir "$T/cache-inetd" 2>"$T/inetd.err"
	rc=$?
	check "--inetd $(basename "$f"): exit 0 ($(cat "$T/inetd.err"))" [ $rc -eq 0 ]
	if $DCC check-reply "$T/inetd-reply.bin" --proto "$proto" >"$T/c.txt"; then
		pass "--inetd $(basename "$f"): valid reply: $(head -n 1 "$T/c.txt")"
	else
		fail "--inetd $(basename "$f"): $(cat "$T/c.txt") $(head -c 300 "$T/inetd.err")"
	fi
done

log "--- 4. stats port"
$DCC http "$DSPORT" / >"$T/page.txt"
check "text page: HTTP 200" sh -c "head -n 1 '$T/page.txt' | grep -q '^HTTP/1.[01] 200'"
check "text page: text/plain" grep -qi '^Content-Type: text/plain' "$T/page.txt"
check "text page: <distccstats> block" grep -q '^<distccstats>' "$T/page.txt"
if [ -f "$VECTORS/stats-page.txt" ]; then
	want=$(sed -n 's/^\(dcc_[a-zA-Z0-9_]*\) .*/\1/p' "$VECTORS/stats-page.txt" | tr '\n' ' ')
	note "field names from vectors/stats-page.txt"
else
	want="dcc_tcp_accept dcc_rej_bad_req dcc_rej_overload dcc_compile_ok dcc_compile_error dcc_compile_timeout dcc_cli_disconnect dcc_other dcc_longest_job dcc_longest_job_compiler dcc_longest_job_time_msecs dcc_max_kids dcc_avg_kids1 dcc_avg_kids2 dcc_avg_kids3 dcc_current_load dcc_load1 dcc_load2 dcc_load3 dcc_num_compiles1 dcc_num_compiles2 dcc_num_compiles3 dcc_num_procstate_D dcc_max_RSS dcc_max_RSS_name dcc_io_rate dcc_free_space"
fi
have=$(sed -n 's/^\(dcc_[a-zA-Z0-9_]*\) .*/\1/p' "$T/page.txt" | tr '\n' ' ')
missing=""
for f in $want; do
	case " $have " in
	*" $f "*) ;;
	*) missing="$missing $f" ;;
	esac
done
check "text page has every distccd field name${missing:+ (missing:$missing)}" [ -z "$missing" ]
check "text page: same field order as distccd" [ "$(echo $have | cut -d' ' -f1-27)" = "$(echo $want | cut -d' ' -f1-27)" ]
check "text page: dcc_compile_ok counts the two jobs" [ "$(dstat_above "$DSPORT" dcc_compile_ok 1)" -ge 2 ]

$DCC http "$DSPORT" /stats.json >"$T/json.txt"
$PYTHON - "$T/json.txt" >"$T/json.chk" 2>&1 <<'EOF'
import json, sys
raw = open(sys.argv[1], "rb").read()
for sep in (b"\r\n\r\n", b"\n\n"):
    k = raw.find(sep)
    if k >= 0:
        head, body = raw[:k], raw[k + len(sep):]
        break
else:
    print("no HTTP header/body split"); sys.exit(1)
if b" 200" not in head.split(b"\n")[0]:
    print("status line: %r" % head.split(b"\n")[0]); sys.exit(1)
d = json.loads(body)
print("ok: %d top-level keys: %s" % (len(d), " ".join(sorted(d)[:12])))
EOF
check "/stats.json is valid JSON: $(cat "$T/json.chk")" grep -q '^ok' "$T/json.chk"

$DCC http "$DSPORT" /metrics >"$T/metrics.txt"
check "/metrics: HTTP 200" sh -c "head -n 1 '$T/metrics.txt' | grep -q ' 200'"
check "/metrics: has '# TYPE' lines ($(grep -c '^# TYPE' "$T/metrics.txt"))" grep -q '^# TYPE ' "$T/metrics.txt"

check "daemon still alive" alive "$DPID"

# 5. the open files limit: a soft limit of 256 (what macOS gives what
#    launchd starts without limits of its own) is raised toward 8192
if [ -r /proc/self/limits ]; then
	hard=$(ulimit -Hn)
	want=8192
	[ "$hard" != unlimited ] && [ "$hard" -lt "$want" ] && want=$hard
	# the last part of the test: the shell keeps the lower limit
	ulimit -Sn 256 || die "ulimit -Sn 256"
	start_boltccd || die "daemon with ulimit -Sn 256"
	soft=$(awk '/^Max open files/ {print $4}' "/proc/$DPID/limits" 2>/dev/null)
	check "open files: a soft limit of 256 raised to $want (got ${soft:-?})" \
		test "${soft:-0}" = "$want"
else
	note "no /proc/self/limits: open files limit not checked"
fi
finish
