#!/bin/sh
# t_stats.sh - `boltcc --stats` (and -s) for people: a few real compiles
# through a loopback boltccd (two misses compiled remotely in pump mode,
# a hit from the local tier, one from the farm, a link that stays local,
# a fallback with the host down), then
#   - the summary's lines carry those numbers, rates in percent;
#   - the farm table follows, with its hit rate in percent;
#   - the raw counters and the hosts' raw pages only with -v;
#   - -s prints what --stats prints, "boltcc cc -s" stays a compile;
#   - --json parses, its "summary" has the same numbers (as numbers), a
#     host page's numeric values are numbers, and a state dir name and a
#     host page with control bytes and invalid UTF-8 still give valid
#     JSON (python3 -m json.tool).
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc

S=$T/src
mkdir -p "$S"
cat >"$S/a.c" <<'EOF'
int a(int x) { return x + 1; }
EOF
cat >"$S/b.c" <<'EOF'
int b(int x) { return x * 2; }
EOF
cat >"$S/c.c" <<'EOF'
int c(int x) { return x - 1; }
EOF
cat >"$S/main.c" <<'EOF'
int a(int); int b(int);
int main(void) { return a(1) + b(2) == 6 ? 0 : 1; }
EOF
start_boltccd || die "boltccd did not start"
set -- $(freeports 1)
DEAD=$1
CDIR=$(new_client_dir)
HOSTS="127.0.0.1:$DPORT,bolt"
BOLTCC_HOSTS=$HOSTS
export BOLTCC_HOSTS

cc_() { (cd "$S" && BOLTCC_DIR="$CDIR" "$BOLTCC" gcc "$@"); }

log "--- compiles: 2 misses, a local-tier hit, a farm hit, a link, a fallback"
check "a.c: miss, compiled remotely" cc_ -O2 -c a.c -o a.o
check "b.c: miss, compiled remotely" cc_ -O2 -c b.c -o b.o
rm -f "$S/a.o"
check "a.c again: a hit from the local tier" cc_ -O2 -c a.c -o a.o
rm -f "$S/b.o"
check "b.c again, no local tier: a hit from the farm" \
	env BOLTCC_LOCAL_CACHE_SIZE=0 sh -c "cd '$S' && BOLTCC_DIR='$CDIR' '$BOLTCC' gcc -O2 -c b.c -o b.o"
check "main.c: compiled remotely" cc_ -O2 -c main.c -o main.o
check "link: stays local" cc_ a.o b.o main.o -o prog
check "the program runs" "$S/prog"
# (c.c: a.c would be a hit from the local tier, which needs no host)
check "host down: falls back to a local compile" \
	env BOLTCC_HOSTS="127.0.0.1:$DEAD,bolt" sh -c "cd '$S' && BOLTCC_DIR='$CDIR' '$BOLTCC' gcc -O2 -c c.c -o c.o 2>/dev/null"
check "the fallback's object is there" elf_object "$S/c.o"

log "--- the summary"
BOLTCC_DIR=$CDIR "$BOLTCC" --stats >"$T/stats.txt" 2>"$T/stats.err"
check "--stats exits 0" [ $? -eq 0 ]
sed 's/^/    /' "$T/stats.txt"
# field LABEL: the line "  LABEL:  n / whole (p%) ..." as "n whole p"
field() {
	sed -n "s/^ *$1: *\([0-9][0-9]*\)\( *\/ *\([0-9][0-9]*\) (\([0-9.-]*\)%*)\)\{0,1\}.*/\1 \3 \4/p" \
		"$T/stats.txt" | head -n 1 | sed 's/ *$//'
}
# A miss each for a.c, b.c, main.c; a local-tier hit, a farm hit; the
# link and the fallback (its host never answered: no cache did).
check "Cacheable calls: 5 / 7 ($(field 'Cacheable calls'))" [ "$(field 'Cacheable calls')" = "5 7 71.4" ]
check "Hits: 2 / 5 ($(field Hits))" [ "$(field Hits)" = "2 5 40.0" ]
check "local tier: 1 ($(field 'local tier'))" [ "$(field 'local tier')" = 1 ]
check "farm: 1 ($(field farm))" [ "$(field farm)" = 1 ]
check "Misses: 3 / 5 ($(field Misses))" [ "$(field Misses)" = "3 5 60.0" ]
check "Uncacheable calls: 2 / 7 ($(field 'Uncacheable calls'))" [ "$(field 'Uncacheable calls')" = "2 7 28.6" ]
check "uncacheable: link 1 ($(field link))" [ "$(field link)" = 1 ]
check "uncacheable: no-cache-answer 1 ($(field no-cache-answer))" [ "$(field no-cache-answer)" = 1 ]
check "Compiles: 5 ($(field Compiles))" [ "$(field Compiles)" = 5 ]
check "Remote: 3 / 5 ($(field Remote))" [ "$(field Remote)" = "3 5 60.0" ]
check "remote in pump mode: 3" grep -q '^  Remote: .*pump mode: 3$' "$T/stats.txt"
check "Local: 2 / 5 ($(field Local))" [ "$(field Local)" = "2 5 40.0" ]
check "by rule: 1 ($(field 'by rule'))" [ "$(field 'by rule')" = 1 ]
check "fallback: 1 ($(field fallback))" [ "$(field fallback)" = 1 ]
check "the fallback's reason is listed" grep -Eq '^      [a-z-]*connect[a-z-]*: +1$' "$T/stats.txt"
check "Failed host attempts: 1 ($(field 'Failed host attempts'))" [ "$(field 'Failed host attempts')" = 1 ]
check "Sent / received in KiB" grep -Eq '^Sent / received: +[0-9.]+ (B|KiB) / [0-9.]+ (B|KiB|MiB)$' "$T/stats.txt"
check "Farm: 1 host, answered" grep -q '^Farm: *1 host: 1 answered, 0 unavailable$' "$T/stats.txt"
check "the farm table follows the summary" sh -c \
	"awk '/^Farm:/{f=1} f && /^artifact cache on the farm/{t=1} END{exit !t}' '$T/stats.txt'"
check "the farm table's hit rate is a percent" grep -Eq \
	"^  127\.0\.0\.1:$DPORT,bolt +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]% " "$T/stats.txt"
check "no raw counter without -v" sh -c "! grep -Eq 'cache_lookups|jobs_remote_ok|dcc_' '$T/stats.txt'"

log "--- -s, -v"
BOLTCC_DIR=$CDIR "$BOLTCC" -s >"$T/s.txt" 2>&1
check "-s prints what --stats prints" cmp -s "$T/stats.txt" "$T/s.txt"
BOLTCC_DIR=$CDIR "$BOLTCC" -s -v >"$T/v.txt" 2>&1
check "-s -v: the summary first" sh -c "head -n 5 '$T/v.txt' | grep -q '^Cacheable calls:'"
check "-s -v: the raw counters" grep -Eq '^  cache_hits_local +1$' "$T/v.txt"
check "-s -v: jobs_remote_pump" grep -Eq '^  jobs_remote_pump +3$' "$T/v.txt"
check "-s -v: the host's raw page" grep -Eq '^  dcc_[a-z_]+ ' "$T/v.txt"
BOLTCC_DIR=$CDIR "$BOLTCC" --stats --verbose >"$T/v2.txt" 2>&1
check "--stats --verbose: the raw counters too" grep -Eq '^  cache_hits_local +1$' "$T/v2.txt"
BOLTCC_DIR=$CDIR "$BOLTCC" --stats foo >/dev/null 2>"$T/bad.err"
check "--stats with another word: exit 101" [ $? -eq 101 ]
check "... saying which word" grep -q 'foo' "$T/bad.err"
check "boltcc cc -s is a compile (strip), not --stats" \
	sh -c "cd '$S' && BOLTCC_DIR='$(new_client_dir)' '$BOLTCC' gcc -s -O2 -c a.c -o s.o && test -s s.o"

log "--- --json"
BOLTCC_DIR=$CDIR "$BOLTCC" --stats --json >"$T/stats.json"
check "--stats --json is valid JSON (json.tool)" sh -c "$PYTHON -m json.tool '$T/stats.json' >/dev/null"
BOLTCC_DIR=$CDIR "$BOLTCC" -s --json -v >"$T/s.json"
check "-s --json -v is valid JSON" sh -c "$PYTHON -m json.tool '$T/s.json' >/dev/null"
check "--json: the summary has the text's numbers, as numbers" \
	$PYTHON - "$T/stats.json" "$DPORT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
c = d["client"]["counters"]
# the keys from before the summary are all there
assert c["cache_hits"] == 2 and c["cache_hits_local"] == 1, c
assert d["client"]["dir"] and isinstance(d["hosts"], list), d
want = {"calls": 7, "cacheable_calls": 5, "cacheable_percent": 71.4,
        "hits": 2, "hit_rate_percent": 40.0, "hits_local_tier": 1,
        "hits_farm": 1, "misses": 3, "miss_rate_percent": 60.0,
        "uncacheable_calls": 2, "uncacheable_percent": 28.6,
        "compiles": 5, "compiles_remote": 3, "compiles_remote_percent": 60.0,
        "compiles_remote_pump": 3, "compiles_local": 2,
        "compiles_local_percent": 40.0, "compiles_local_by_rule": 1,
        "compiles_local_fallback": 1, "failed_host_attempts": 1}
for k, v in want.items():
    assert s[k] == v and type(s[k]) in (int, float), (k, s[k], v)
assert s["uncacheable_by_reason"] == {"link": 1, "no-cache-answer": 1}, s
assert sum(s["compiles_local_fallback_by_reason"].values()) == 1, s
assert s["farm"] == {"hosts": 1, "answered": 1, "unavailable": 0,
                     "not_asked": 0}, s
# every value a host page gives as a number is a JSON number
h = d["hosts"][0]
assert h["host"] == "127.0.0.1:%s,bolt" % sys.argv[2], h
for part in ("stats", "cache"):
    for k, v in h[part].items():
        if isinstance(v, str):
            try:
                n = json.loads(v)
            except ValueError:
                continue
            assert not isinstance(n, (int, float)), (part, k, v)
assert isinstance(h["cache"]["hits"], int) and h["cache"]["hits"] >= 1, h
EOF

log "--- --json with control bytes and invalid UTF-8"
# a state dir whose name is not UTF-8 and holds control bytes
ODD="$T/dir-caf$(printf '\351\001\033')-$(printf '\303\251')"
mkdir "$ODD" && cp "$CDIR/stats" "$ODD/stats" || die "cannot make $ODD"
# a host whose stats port says odd things (a fake one)
set -- $(freeports 1)
FAKE=$1
$PYTHON - "$FAKE" >"$T/fake.log" 2>&1 <<'EOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
page = (b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n<distccstats>\n"
        b"dcc_tcp_accept 5\ndcc_load 0.25\ndcc_big 1e3\n"
        b"dcc_longest_file caf\xe9\x01\x1b[31m\"q\\.c\n"
        b"dcc_utf8 \xc3\xa9t\xc3\xa9\nk\xff\x02ey 7\ndcc_nan NaN\n"
        b"</distccstats>\n")
metrics = (b"HTTP/1.0 200 OK\r\n\r\nboltccd_cache_hits_total 4\n"
           b"boltccd_cache_misses_total 1\n"
           b"boltccd_cache_uncacheable_total{reason=\"x\xff\x03\"} 2\n")
while True:
    c, _ = s.accept()
    req = c.recv(4096)
    c.sendall(metrics if b"/metrics" in req else page)
    c.close()
EOF
_PIDS="$_PIDS $!"
$DCC wait-port "$FAKE" 10 || die "the fake stats port did not come up"
BOLTCC_DIR=$ODD BOLTCC_HOSTS="$HOSTS 127.0.0.1:$((FAKE - 1)),bolt" \
	"$BOLTCC" --stats --json >"$T/odd.json" 2>"$T/odd.err"
check "odd bytes: exit 0" [ $? -eq 0 ]
check "odd bytes: valid JSON (json.tool)" sh -c "$PYTHON -m json.tool '$T/odd.json' >/dev/null"
check "odd bytes: valid UTF-8, no raw control byte" $PYTHON - "$T/odd.json" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
b.decode("utf-8")
assert not any(x < 0x20 and x != 0x0a for x in b), b
EOF
check "odd bytes: what the strings say" $PYTHON - "$T/odd.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["client"]["dir"].endswith("/dir-caf\ufffd\x01\x1b-\u00e9"), \
    ascii(d["client"]["dir"])
h = d["hosts"][1]
st = h["stats"]
assert st["dcc_tcp_accept"] == 5 and st["dcc_load"] == 0.25, st
assert st["dcc_big"] == 1000 and st["dcc_nan"] == "NaN", st
assert st["dcc_longest_file"] == "caf\ufffd\x01\x1b[31m\"q\\.c", ascii(st)
assert st["dcc_utf8"] == "\u00e9t\u00e9", ascii(st)
assert st["k\ufffd\x02ey"] == 7, ascii(st)
assert h["cache"]["hits"] == 4, h["cache"]
assert h["cache"]["uncacheable:x\ufffd\x03"] == 2, ascii(h["cache"])
assert d["summary"]["farm"]["answered"] == 2, d["summary"]
EOF
BOLTCC_DIR=$ODD BOLTCC_HOSTS="$HOSTS 127.0.0.1:$((FAKE - 1)),bolt" \
	"$BOLTCC" --stats >"$T/odd.txt" 2>&1
check "odd bytes: the fake host's row in the farm table" \
	grep -Eq "^  127\.0\.0\.1:$((FAKE - 1)),bolt +0 +4 +1 +80\.0% " "$T/odd.txt"

finish
