#!/bin/sh
# t_sched.sh - host choice under load with real processes on loopback:
# several boltccd with different slot counts, one of them slow, and the
# test compiler tests/cluster/fakecc (sleeps, writes a deterministic
# object).  Checks counts and distributions, never times:
#   1. every slot of every host is used at once at some point (fakecc's
#      trace per daemon), objects identical to local compiles, no local
#      fallback;
#   2. the slow host gets fewer jobs than an equal-sized fast one, and its
#      recorded job time (EWMA in $DIR/lock/perf_*) is the larger;
#   3. a host added to $DIR/hosts mid-build receives jobs;
#   4. with every slot taken, a job preprocesses before it waits for one.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool xargs
FAKECC="$BOLTCC_BUILDDIR/tests/cluster/fakecc"
[ -x "$FAKECC" ] || skip "$FAKECC not built (make check builds it)"

# The daemons find "fakecc" on their PATH (the client sends the basename)
# and allow it by name.
mkdir -p "$T/bin" "$T/src" "$T/trace" || die "mkdir"
ln -s "$FAKECC" "$T/bin/fakecc" || die "symlink"
PATH="$T/bin:$PATH"
export PATH

# start NAME JOBS [SLOWDOWN]: a daemon whose fakecc runs trace to
# $T/trace/NAME; sets NAME_PORT and NAME_SPORT.
start() {
	FAKECC_TRACE="$T/trace/$1"
	FAKECC_SLOWDOWN=${3:-1}
	export FAKECC_TRACE FAKECC_SLOWDOWN
	start_boltccd --jobs "$2" --allow-compiler fakecc ||
		die "cannot start boltccd $1"
	eval "$1_PORT=$DPORT; $1_SPORT=$DSPORT"
	unset FAKECC_TRACE FAKECC_SLOWDOWN
}
start A 2
start B 4
start C 2 10		# 10x slower
start D 2		# joins in phase 3

ok() { dstat "$1" dcc_compile_ok; }
# max_overlap FILE: the most compiles that ran at once in a trace
max_overlap() {
	[ -s "$1" ] || { echo 0; return; }
	awk '{ print $1, 1; print $2, -1 }' "$1" | sort -n -k1,1 -k2,2n |
		awk 'BEGIN { c = 0; m = 0 } { c += $2; if (c > m) m = c }
		     END { print m }'
}

# jobs FIRST LAST MS: sources s_FIRST..s_LAST (distinct: no cache hits)
# and their local objects.
jobs() {
	_i=$1
	while [ "$_i" -le "$2" ]; do
		printf 'int f%d(void) { return %d; }\n' "$_i" "$_i" \
			>"$T/src/s_$_i.c"
		echo "$_i"
		_i=$((_i + 1))
	done >"$T/list"
	(cd "$T/src" && FAKECC_SLOWDOWN=0.001 xargs -P 8 -I@ "$FAKECC" \
		-O2 -DFAKECC_MS="$3" -c s_@.c -o l_@.o <"$T/list") ||
		die "local fakecc compiles failed"
}

# farm PARALLEL MS: compile the listed jobs through boltcc, no fallback.
farm() {
	(cd "$T/src" && DISTCC_FALLBACK=0 xargs -P "$1" -I@ "$BOLTCC" \
		"$FAKECC" -O2 -DFAKECC_MS="$2" -c s_@.c -o r_@.o \
		<"$T/list") 2>"$T/farm.err"
}

same_objects() {
	while read -r _i; do
		cmp -s "$T/src/l_$_i.o" "$T/src/r_$_i.o" || {
			echo "    object $_i differs or is missing"
			return 1
		}
	done <"$T/list"
}

BOLTCC_DIR=$(new_client_dir)
export BOLTCC_DIR

# --- 1 + 2: A/2 B/4 C/2 (slow), 8 compiles at a time ---------------------
log "phase 1: A/2 B/4 C/2 (C 10x slower), 48 jobs of 300 ms, -P 8"
jobs 1 48 300
BOLTCC_HOSTS="127.0.0.1:$A_PORT/2,bolt 127.0.0.1:$B_PORT/4,bolt 127.0.0.1:$C_PORT/2,bolt"
export BOLTCC_HOSTS
farm 8 300
check "phase 1: every compile succeeded through the farm" [ $? -eq 0 ]
[ -s "$T/farm.err" ] && sed 's/^/    stderr: /' "$T/farm.err" | head -n 10
check "phase 1: objects identical to local compiles" same_objects
a=$(ok "$A_SPORT"); b=$(ok "$B_SPORT"); c=$(ok "$C_SPORT")
note "jobs: A=$a B=$b C=$c"
check "phase 1: all 48 jobs ran on the daemons" [ $((a + b + c)) -eq 48 ]
for h in A:2 B:4 C:2; do
	n=${h%%:*}; want=${h##*:}
	m=$(max_overlap "$T/trace/$n")
	note "$n: at most $m compiles at once (slots $want)"
	check "phase 1: every slot of $n was busy at once" [ "$m" -eq "$want" ]
done
check "phase 1: the slow host C got fewer jobs than A ($c < $a)" \
	[ "$c" -lt "$a" ]
pa=$(cat "$BOLTCC_DIR/lock/perf_tcp_127.0.0.1_$A_PORT" 2>/dev/null || echo 0)
pc=$(cat "$BOLTCC_DIR/lock/perf_tcp_127.0.0.1_$C_PORT" 2>/dev/null || echo 0)
note "recorded job time: A ${pa} us, C ${pc} us"
check "phase 1: C's recorded job time exceeds A's" [ "$pc" -gt "$pa" ] \
	&& [ "$pa" -gt 0 ]
check "phase 1: no job ran locally" \
	sh -c "! grep -q '^jobs_local ' '$BOLTCC_DIR/stats'"

# --- 3: a host added to $DIR/hosts mid-build ------------------------------
log "phase 3: hosts file A/2 B/4, D/2 added after 15 of 60 jobs of 400 ms"
unset BOLTCC_HOSTS
printf '127.0.0.1:%s/2 127.0.0.1:%s/4\n' "$A_PORT" "$B_PORT" \
	>"$BOLTCC_DIR/hosts"
jobs 101 160 400
a0=$(ok "$A_SPORT"); b0=$(ok "$B_SPORT")
farm 6 400 &
fpid=$!
_i=0
# progress: objects written so far (cheap to poll)
done_jobs() { ls "$T/src" | grep -c '^r_1[0-9][0-9]\.o$'; }
while [ "$(done_jobs)" -lt 15 ] && [ $_i -lt 1200 ] &&
    kill -0 $fpid 2>/dev/null; do
	sleep 0.05; _i=$((_i + 1))
done
printf '127.0.0.1:%s/2 127.0.0.1:%s/4 127.0.0.1:%s/2\n' "$A_PORT" \
	"$B_PORT" "$D_PORT" >"$BOLTCC_DIR/hosts.new" &&
	mv "$BOLTCC_DIR/hosts.new" "$BOLTCC_DIR/hosts"
note "D added after $(done_jobs) jobs"
wait $fpid
check "phase 3: every compile succeeded through the farm" [ $? -eq 0 ]
[ -s "$T/farm.err" ] && sed 's/^/    stderr: /' "$T/farm.err" | head -n 10
check "phase 3: objects identical to local compiles" same_objects
d=$(ok "$D_SPORT")
a1=$(($(ok "$A_SPORT") - a0)); b1=$(($(ok "$B_SPORT") - b0))
note "jobs: A=$a1 B=$b1 D=$d"
check "phase 3: all 60 jobs ran on the daemons" [ $((a1 + b1 + d)) -eq 60 ]
check "phase 3: the added host D received jobs" [ "$d" -gt 0 ]
# --- 4: the local half before the slot ------------------------------------
# With every host's request the same (all ",bolt"), boltcc preprocesses
# first and only then waits for a slot: the wait overlaps other compiles.
log "phase 4: A/1 held by a 2 s job; the next job preprocesses, then waits"
jobs 201 201 2000
mv "$T/list" "$T/list.201"
jobs 202 202 50
cat "$T/list.201" >>"$T/list"
BOLTCC_HOSTS="127.0.0.1:$A_PORT/1,bolt"
export BOLTCC_HOSTS
(cd "$T/src" && DISTCC_FALLBACK=0 "$BOLTCC" "$FAKECC" -O2 -DFAKECC_MS=2000 \
	-c s_201.c -o r_201.o) &
hpid=$!
lockf="$BOLTCC_DIR/lock/cpu_tcp_127.0.0.1_${A_PORT}_0"
held() {	# is A's one slot locked by another process?
	$PYTHON -c 'import fcntl, sys
f = open(sys.argv[1], "r+")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
sys.exit(1)' "$lockf" 2>/dev/null
}
_i=0
until held || [ $_i -ge 200 ]; do sleep 0.02; _i=$((_i + 1)); done
check "phase 4: the 2 s job holds A's only slot" held
(cd "$T/src" && DISTCC_FALLBACK=0 DISTCC_VERBOSE=1 "$BOLTCC" "$FAKECC" -O2 \
	-DFAKECC_MS=50 -c s_202.c -o r_202.o) 2>"$T/p4.err"
check "phase 4: the waiting job succeeded" [ $? -eq 0 ]
wait $hpid
check "phase 4: the holding job succeeded" [ $? -eq 0 ]
check "phase 4: objects identical to local compiles" same_objects
pre=$(grep -n 'preprocessing: ' "$T/p4.err" | head -n 1 | cut -d: -f1)
took=$(grep -n 'took slot ' "$T/p4.err" | head -n 1 | cut -d: -f1)
note "log lines: preprocessing at ${pre:-none}, took slot at ${took:-none}"
in_order() { [ -n "$pre" ] && [ -n "$took" ] && [ "$pre" -lt "$took" ]; }
check "phase 4: it preprocessed before it took the slot" in_order
finish
