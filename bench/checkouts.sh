#!/bin/sh
# bench/checkouts.sh - the cache across two checkouts of one project at
# different absolute paths, as Xcode builds them: absolute source, -I, -o
# and -MF paths, -O2 -g, and -ffile-prefix-map=<checkout>=/src and
# -ffile-prefix-map=<outdir>=/out so that the objects do not name either
# place.  zlib's static-library sources (Debian's source package) are
# unpacked twice, $W/alice/zlib and $W/bob/zlib; checkout A (alice) is
# built with a cold cache, then checkout B (bob) is built and timed.
# Variants, all in one run, with the same command list and driver (xargs
# -P$BENCH_J, each job run in its checkout):
#   local               the compiler alone (the baseline)
#   boltcc cache        boltcc -> one loopback boltccd, fresh --cache-dir
#   boltcc no-cache     boltcc -> boltccd --no-cache
#   ccache              fresh CCACHE_DIR, base_dir = $W (the parent of both
#                       homes), hash_dir = false (CCACHE_NOHASHDIR=1)
# For each: B's seconds, the ratio to local's, B's cache hits (boltccd's
# /stats.json, ccache --print-stats), and how many of B's objects and .d
# files are byte-identical to those of B's local build.  The load average
# is printed at the start and the end: the numbers mean something only on
# a quiet machine.  See bench/README.md ("Two checkouts").  Not part of
# `make check`.
#
#   sh bench/checkouts.sh                        CC (default gcc), build/normal
#   BENCH_COMPILERS="gcc clang" sh bench/checkouts.sh
#   BOLTCC_BUILDDIR=/path/to/build BENCH_J=2 BENCH_KEEP=1 ...
#
# Knobs: BENCH_COMPILERS (default $CC, else gcc), BENCH_CFLAGS (default
# '-O2 -g'), BENCH_J (parallel jobs, default the number of CPUs),
# BENCH_REPS (default 3: every variant that often, interleaved, each rep
# with fresh caches; the table gives medians), BENCH_KEEP=1 (keep the temp dir), BOLTCC_BENCH_CACHE (where zlib's
# source package is kept, default ~/.cache/boltcc-bench).  Fetching the
# source needs apt-get; as root on a machine without deb-src lines it adds
# them (/etc/apt/sources.list.d/boltcc-deb-src-*), as
# contrib/macos/cross-build.sh does, and installs ccache if it is missing.
set -u
. "$(dirname "$0")/lib.sh"
SRC=$(pwd)
B=$BOLTCC_BUILDDIR
: "${BENCH_COMPILERS:=${CC:-gcc}}"
: "${BENCH_CFLAGS:=-O2 -g}"
: "${BENCH_J:=$(nproc 2>/dev/null || echo 2)}"
: "${BENCH_REPS:=3}"
CACHE=${BOLTCC_BENCH_CACHE:-${HOME:-/root}/.cache/boltcc-bench}
DCC="python3 $SRC/tests/integration/dcc.py"
PYTHONDONTWRITEBYTECODE=1
LC_ALL=C
export PYTHONDONTWRITEBYTECODE LC_ALL
unset DISTCC_HOSTS BOLTCC_HOSTS DISTCC_DIR BOLTCC_DIR DISTCC_FALLBACK \
	CCACHE_PREFIX CCACHE_DISABLE CCACHE_RECACHE CCACHE_READONLY \
	CCACHE_CONFIGPATH CCACHE_BASEDIR CCACHE_NOHASHDIR CCACHE_HASHDIR \
	CCACHE_DIR CCACHE_REMOTE_STORAGE CCACHE_SECONDARY_STORAGE 2>/dev/null || true

die() { echo "bench/checkouts.sh: $*" >&2; exit 1; }
say() { printf '%s\n' "$*"; }

T=$(mktemp -d "${TMPDIR:-/tmp}/bc-bench-checkouts.XXXXXX") || exit 1
PIDS=""
cleanup() {
	for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$T/tmp" || exit 1
TMPDIR=$T/tmp
export TMPDIR

# ---- tools ---------------------------------------------------------------

apt_install() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
	say "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >"$T/apt.log" 2>&1 || {
		apt-get update -q >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$T/apt.log" 2>&1
	}
}
command -v ccache >/dev/null 2>&1 || apt_install ccache ||
	say "(ccache is not installed and cannot be installed here: no ccache row)"
HAVE_CCACHE=0
command -v ccache >/dev/null 2>&1 && HAVE_CCACHE=1
for c in $BENCH_COMPILERS; do
	command -v "$c" >/dev/null 2>&1 || die "compiler $c not found"
done

# ---- zlib's source, from Debian ------------------------------------------

# deb-src entries for every deb entry, when the machine has none (the way
# contrib/macos/cross-build.sh adds them)
ensure_deb_src() {
	if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list \
	    /etc/apt/sources.list.d/ 2>/dev/null; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "apt has no deb-src lines; add them (as root) or run as root"
	say "adding deb-src lines (/etc/apt/sources.list.d/boltcc-deb-src.*)"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*/Types: deb-src/' "$f" \
			>"/etc/apt/sources.list.d/boltcc-deb-src-$(basename "$f")"
	done
	if [ -f /etc/apt/sources.list ]; then
		sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
			>/etc/apt/sources.list.d/boltcc-deb-src.list
	fi
	apt-get update -q >"$T/apt-update.log" 2>&1 || true
}

# orig_tarball PKG: the cached upstream tarball of source package PKG
orig_tarball() {
	for _f in "$CACHE/src/$1"_*.orig.tar.*; do
		case $_f in *.asc) continue ;; esac
		[ -f "$_f" ] && { echo "$_f"; return 0; }
	done
	return 0
}

# fetch PKG: apt-get source --download-only, trying each version the
# archive lists (a mirror may list a version whose files it lacks)
fetch_source() {
	[ -n "$(orig_tarball "$1")" ] && return 0
	command -v apt-get >/dev/null 2>&1 || die "no $1 source in $CACHE/src and no apt-get"
	ensure_deb_src
	mkdir -p "$CACHE/src" || exit 1
	_versions=$(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -r -V)
	[ -n "$_versions" ] || { apt-get update -q >/dev/null 2>&1 || true
		_versions=$(apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -r -V); }
	for _v in $_versions; do
		say "apt-get source --download-only $1=$_v (into $CACHE/src)"
		(cd "$CACHE/src" && apt-get source --download-only "$1=$_v") \
			>"$CACHE/src/$1.log" 2>&1 || true
		[ -n "$(orig_tarball "$1")" ] && return 0
	done
	die "could not download the source of $1 (log: $CACHE/src/$1.log)"
}

fetch_source zlib
TARBALL=$(orig_tarball zlib)
W=$T/w
for who in alice bob; do
	mkdir -p "$W/$who/zlib" "$W/$who/out" "$W/$who/.boltcc" || exit 1
	tar -xf "$TARBALL" -C "$W/$who/zlib" --strip-components=1 ||
		die "cannot unpack $TARBALL"
done
A=$W/alice/zlib
BB=$W/bob/zlib

# The static library's objects: OBJZ and OBJG of zlib's Makefile.in.
LIBSRC=$(awk '
	/^OBJ[ZG] *=/ { on = 1; sub(/^[^=]*=/, "") }
	on { c = sub(/\\$/, ""); for (i = 1; i <= NF; i++) print $i; if (!c) on = 0 }
	' "$A/Makefile.in" 2>/dev/null | sed -n 's/\.o$//p')
[ -n "$LIBSRC" ] || LIBSRC="adler32 crc32 deflate infback inffast inflate inftrees
trees zutil compress uncompr gzclose gzlib gzread gzwrite"
: >"$T/list"
for f in $LIBSRC; do
	[ -f "$A/$f.c" ] || die "$f.c is not in $TARBALL"
	echo "$f" >>"$T/list"
done
N=$(wc -l <"$T/list" | tr -d ' ')

# One job: cc1.sh CHECKOUT OUTDIR NAME, in the checkout, with $LAUNCH (empty,
# boltcc or ccache) before $BCC, as the generated build system would.  The
# defines are those zlib's configure sets on Linux.
cat >"$T/cc1.sh" <<'EOF'
#!/bin/sh
src=$1 out=$2 f=$3
cd "$src" || exit 1
exec $LAUNCH "$BCC" $BENCH_CFLAGS -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN \
	-I"$src" -ffile-prefix-map="$src"=/src -ffile-prefix-map="$out"=/out \
	-MD -MF "$out/$f.d" -c "$src/$f.c" -o "$out/$f.o"
EOF
export BENCH_CFLAGS

now_ns() { date +%s%N; }

# build CHECKOUT OUTDIR: every job of the list, $BENCH_J at a time; sets
# SECS.  A failure stops the bench: the remote rows run with
# DISTCC_FALLBACK=0, so a failure is the tool's.
build() {
	rm -f "$2"/*.o "$2"/*.d
	_t0=$(now_ns)
	xargs -P "$BENCH_J" -n 1 sh "$T/cc1.sh" "$1" "$2" <"$T/list" \
		>>"$T/build.log" 2>&1 || {
		tail -n 20 "$T/build.log" >&2
		die "build of $1 with '${LAUNCH:-} $BCC' failed (log above)"
	}
	_t1=$(now_ns)
	SECS=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
}

# cache_stats SPORT: "hits misses done other" of a boltccd's cache (done:
# results stored, failed to store or uncacheable; other: hits asked from
# another working directory than the one that stored them, "-" from a
# boltccd that does not count them)
cache_stats() {
	python3 - "$1" <<'EOF'
import json, sys, urllib.request
c = json.load(urllib.request.urlopen("http://127.0.0.1:%s/stats.json" % sys.argv[1],
                                     timeout=5))["cache"]
print(c["hits"], c["misses"], c["stores"] + c["store_errors"] + c["uncacheable"],
      c.get("hits_other_checkout", "-"))
EOF
}

# wait_cache SPORT: until every miss was stored (a daemon stores after it
# replied, and B must not start before A's results are in) and every job
# counted, at most 5 s
wait_cache() {
	_i=0
	while [ $_i -lt 50 ]; do
		_s=$(cache_stats "$1")
		# shellcheck disable=SC2086
		set -- "$1" $_s
		[ $(($2 + $3)) -ge "$WANT" ] && [ "$4" -ge "$3" ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 0
}

# client_counter DIR NAME: a counter of boltcc's state dir DIR
client_counter() {
	BOLTCC_DIR=$1 "$B/boltcc" --stats --json 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["client"]["counters"].get(sys.argv[1], 0))
except Exception:
    print("?")' "$2"
}

# start_daemon NAME ARGS...: a boltccd on 127.0.0.1; sets DPORT DSPORT DPID
start_daemon() {
	_name=$1
	shift
	set -- $($DCC freeport --pair) "$@"
	DPORT=$1 DSPORT=$2
	shift 2
	mkdir -p "$T/$_name.tmp"
	"$B/boltccd" --no-detach --listen 127.0.0.1 --port "$DPORT" \
		--stats-port "$DSPORT" --jobs "$BENCH_J" --tmp-dir "$T/$_name.tmp" \
		--log-file "$T/$_name.log" --log-level warn "$@" >"$T/$_name.out" 2>&1 &
	DPID=$!
	PIDS="$PIDS $DPID"
	$DCC wait-http "$DSPORT" 15 || die "boltccd $_name did not start ($T/$_name.log)"
}

# stop_daemon PID: stop a daemon this script started
stop_daemon() {
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	_p=""
	for _x in $PIDS; do [ "$_x" = "$1" ] || _p="$_p $_x"; done
	PIDS=$_p
}

# compare DIR: B's objects and .d files in DIR against B's local build of
# this rep; sets SAME_O SAME_D ("n/N")
compare() {
	_o=0 _d=0
	while read -r f; do
		cmp -s "$RES/local/$f.o" "$1/$f.o" && _o=$((_o + 1))
		cmp -s "$RES/local/$f.d" "$1/$f.d" && _d=$((_d + 1))
	done <"$T/list"
	SAME_O="$_o/$N" SAME_D="$_d/$N"
}

# both NAME: build A, then B (timed: SECS; A's time: ASECS), each checkout
# with its own client state dir (two users), and keep B's outputs in
# $RES/NAME.  $AFTER_A runs between the two.
both() {
	rm -rf "$W/alice/.boltcc" "$W/bob/.boltcc"
	mkdir -p "$W/alice/.boltcc" "$W/bob/.boltcc"
	BOLTCC_DIR=$W/alice/.boltcc
	export BOLTCC_DIR
	build "$A" "$W/alice/out"
	ASECS=$SECS
	[ -n "${AFTER_A:-}" ] && $AFTER_A
	BOLTCC_DIR=$W/bob/.boltcc
	build "$BB" "$W/bob/out"
	rm -rf "${RES:?}/$1"
	mkdir -p "$RES/$1"
	cp "$W/bob/out"/*.o "$W/bob/out"/*.d "$RES/$1/"
	unset BOLTCC_DIR
}

# client_jobs DIR: how the client of state dir DIR ran its jobs
client_jobs() {
	echo "B client: hits $(client_counter "$1" cache_hits), remote $(client_counter "$1" jobs_remote_ok), local $(client_counter "$1" jobs_local)"
}

# record VARIANT HITS NOTES: one line of $RUNS for this rep (tab-separated)
record() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$BCC" "$1" "$ASECS" "$SECS" "$2" \
		"$SAME_O" "$SAME_D" "$3" >>"$RUNS"
}

# one_rep: every variant once for compiler $BCC, fresh caches
one_rep() {
	# 1. local
	LAUNCH="" AFTER_A=""
	export LAUNCH
	both local
	SAME_O=ref SAME_D=ref
	record local - "the reference for same .o/.d"

	# 2. boltcc -> boltccd with a fresh cache
	rm -rf "$T/cache"
	start_daemon "cache-$BCC" --cache-dir "$T/cache"
	CSPORT=$DSPORT
	LAUNCH=$B/boltcc
	DISTCC_FALLBACK=0 BOLTCC_HOSTS="127.0.0.1:$DPORT/$BENCH_J,bolt"
	export DISTCC_FALLBACK BOLTCC_HOSTS
	AFTER_A=after_a_boltcc
	both boltcc-cache
	AFTER_A=""
	WANT=$((H0 + M0 + N))
	wait_cache "$CSPORT"
	set -- $(cache_stats "$CSPORT")
	_oth=-
	[ "$4" != - ] && [ "$O0" != - ] && _oth=$(($4 - O0))
	compare "$RES/boltcc-cache"
	record "boltcc cache" "$(($1 - H0))/$N" \
		"daemon misses $(($2 - M0)), hits_other_checkout $_oth; $(client_jobs "$W/bob/.boltcc")"
	stop_daemon "$DPID"

	# 3. boltcc -> boltccd --no-cache
	start_daemon "nocache-$BCC" --no-cache
	BOLTCC_HOSTS="127.0.0.1:$DPORT/$BENCH_J,bolt"
	both boltcc-nocache
	compare "$RES/boltcc-nocache"
	record "boltcc no-cache" - "$(client_jobs "$W/bob/.boltcc")"
	stop_daemon "$DPID"
	unset DISTCC_FALLBACK BOLTCC_HOSTS

	# 4. ccache, base_dir = the parent of both homes, hash_dir = false
	[ "$HAVE_CCACHE" = 1 ] || return 0
	LAUNCH=$(command -v ccache)
	rm -rf "$T/ccache"
	CCACHE_DIR=$T/ccache CCACHE_BASEDIR=$W CCACHE_NOHASHDIR=1
	export CCACHE_DIR CCACHE_BASEDIR CCACHE_NOHASHDIR
	AFTER_A=ccache_zero
	both ccache
	AFTER_A=""
	set -- $(ccache --print-stats | awk '
		$1 == "direct_cache_hit" { d = $2 } $1 == "preprocessed_cache_hit" { p = $2 }
		$1 == "cache_miss" { m = $2 } END { print d + 0, p + 0, m + 0 }')
	compare "$RES/ccache"
	# ccache makes the paths below base_dir relative before it compiles,
	# so its outputs can differ from a local build by design: also compare
	# the hits with ccache's own compile of B (CCACHE_RECACHE), untimed.
	_secs=$SECS
	CCACHE_RECACHE=1
	export CCACHE_RECACHE
	build "$BB" "$W/bob/out"
	unset CCACHE_RECACHE
	SECS=$_secs
	_oo=0 _od=0
	while read -r f; do
		cmp -s "$RES/ccache/$f.o" "$W/bob/out/$f.o" && _oo=$((_oo + 1))
		cmp -s "$RES/ccache/$f.d" "$W/bob/out/$f.d" && _od=$((_od + 1))
	done <"$T/list"
	record ccache "$(($1 + $2))/$N" \
		"direct $1, preprocessed $2, misses $3; same as ccache's own compile of B: .o $_oo/$N, .d $_od/$N"
	unset CCACHE_DIR CCACHE_BASEDIR CCACHE_NOHASHDIR
}

after_a_boltcc() {
	WANT=$N
	wait_cache "$CSPORT"
	set -- $(cache_stats "$CSPORT")
	H0=$1 M0=$2 O0=$4
}
ccache_zero() { ccache -z >/dev/null; }

RUNS=$T/runs
: >"$RUNS"

say "bench/checkouts.sh: zlib $(basename "$TARBALL" | sed 's/^zlib_//; s/\.orig\.tar\..*//'), $N library sources, $BENCH_CFLAGS, xargs -P$BENCH_J, $(nproc) CPUs, $BENCH_REPS reps (median)"
say "   A = $A"
say "   B = $BB"
say "   command: [LAUNCHER] CC $BENCH_CFLAGS -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -I<checkout>"
say "            -ffile-prefix-map=<checkout>=/src -ffile-prefix-map=<outdir>=/out"
say "            -MD -MF <outdir>/F.d -c <checkout>/F.c -o <outdir>/F.o   (run in <checkout>)"
say "   boltcc: $B ($("$B/boltcc" --version 2>/dev/null | head -n 1)), BOLT pump toward one boltccd"
[ "$HAVE_CCACHE" = 1 ] && say "   ccache: $(ccache --version | head -n 1), CCACHE_BASEDIR=$W CCACHE_NOHASHDIR=1"
say "   load at start:$(uptime | sed 's/.*load average//')"
LOAD0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
# busy and steal ticks of the whole machine, to tell this bench's CPU use
# from other work's at the end
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat 2>/dev/null || echo 0 0; }
CPU0=$(cpu_ticks)
WALL0=$(now_ns)

for BCC in $BENCH_COMPILERS; do
	export BCC
	RES=$T/res-$BCC
	say "   $BCC: $("$BCC" --version 2>/dev/null | head -n 1)"
	rep=1
	while [ "$rep" -le "$BENCH_REPS" ]; do
		one_rep
		rep=$((rep + 1))
	done
done

# The table: per compiler and variant, median A and B seconds, B's ratio to
# local's median, the other columns when every rep agrees (else each rep's).
say ""
awk -F '\t' -v order="local|boltcc cache|boltcc no-cache|ccache" '
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
		t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function join(old, v) { return old == "" ? v : old " " v }
function same(s,   a, n, i) {
	n = split(s, a, "|")
	for (i = 2; i <= n; i++) if (a[i] != a[1]) { gsub(/\|/, ",", s); return s }
	return a[1]
}
{
	k = $1 SUBSEP $2
	if (!(k in as)) { cc[++ncc] = $1 }
	as[k] = join(as[k], $3); bs[k] = join(bs[k], $4)
	hits[k] = hits[k] == "" ? $5 : hits[k] "|" $5
	so[k] = so[k] == "" ? $6 : so[k] "|" $6
	sd[k] = sd[k] == "" ? $7 : sd[k] "|" $7
	note[k] = note[k] == "" ? $8 : note[k] "|" $8
}
END {
	nv = split(order, v, "|")
	for (c = 1; c <= ncc; c++) {
		if (seen[cc[c]]++) continue
		printf "%s%s\n", (c > 1 ? "\n" : ""), cc[c]
		printf "%-16s %6s %6s %8s %7s %8s %8s  %-18s %s\n", "variant", "A s", "B s",
		    "B/local", "B hits", "same .o", "same .d", "B s, every rep", "notes"
		base = med(bs[cc[c] SUBSEP "local"])
		for (i = 1; i <= nv; i++) {
			k = cc[c] SUBSEP v[i]
			if (!(k in bs)) continue
			printf "%-16s %6.2f %6.2f %7.2fx %7s %8s %8s  %-18s %s\n", v[i], med(as[k]),
			    med(bs[k]), med(bs[k]) / base, same(hits[k]), same(so[k]), same(sd[k]),
			    bs[k], same(note[k])
		}
	}
}' "$RUNS"

say ""
say "load at end:$(uptime | sed 's/.*load average//')"
LOAD1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
# Every process this bench started has been waited for (the daemons too,
# which waited for their compilers), so the shell's children's times are
# all of its CPU; the rest of the machine's busy time was other work.
times >"$T/times"
CPU1=$(cpu_ticks)
WALL1=$(now_ns)
awk -v c0="$CPU0" -v c1="$CPU1" -v w0="$WALL0" -v w1="$WALL1" -v hz="$(getconf CLK_TCK)" \
    -v n="$(nproc)" -v l0="$LOAD0" -v l1="$LOAD1" -v j="$BENCH_J" '
function secs(t,   m) { m = index(t, "m"); return substr(t, 1, m - 1) * 60 + substr(t, m + 1) + 0 }
{ sub(/s$/, "", $1); sub(/s$/, "", $2); own += secs($1) + secs($2) }
END {
	split(c0, a, " "); split(c1, b, " ")
	wall = (w1 - w0) / 1e9
	other = (b[1] - a[1]) / hz - own
	if (other < 0) other = 0
	steal = (b[2] - a[2]) / hz
	pct = 100 * other / (wall * n)
	# the verdict: the CPU share of other work (the load average at the start
	# still remembers whatever ran in the minutes before, a previous run too)
	q = pct < 10 ? "quiet" : "NOT quiet (other work ran: read the times with care)"
	printf "machine: 1-min load %s at start, %s at end (this bench runs %d jobs), %d CPUs;\n", l0, l1, j, n
	printf "         CPU over the %.0f s run: this bench %.1f s, other work %.1f s (%.1f%% of the machine), steal %.1f s: %s\n",
	    wall, own, other, pct, steal, q
}' "$T/times"
say "A s, B s: seconds to build checkout A (cold cache), then checkout B;"
say "B hits: B's jobs served from the cache that building A filled; same .o / .d:"
say "B's objects and .d files byte-identical to those of B's local build."
