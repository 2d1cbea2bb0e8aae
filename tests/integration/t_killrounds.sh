#!/bin/sh
# t_killrounds.sh - the daemon SIGKILLed again and again under real load
# (issue 21): 4 clients (boltcc BOLT pump, boltcc BOLT plain, Debian's
# distcc protocol 2) compile new good files without fallback or local
# retry while the daemon is killed every 0.3-1.2 s, on even rounds only
# its parent (the workers live on as orphans and finish their jobs), on
# odd rounds its whole process group (the compilers, each in a group of
# its own, die with their workers: daemon/compgroup.h), and restarted on
# the same port, scratch dir and cache dir.  A job may end as a farm
# failure (the client's exit >= 100), never as a compile error: no
# COMPILE_ERROR in the log, no client exit 1-99.  Then: a worker killed
# with its process group mid-compile does not leave its client waiting
# (the compiler must not hold the client's connection), no process of
# its compile (wrapper, gcc driver, cc1) is left 2 s later, and the next
# daemon sweeps the dead workers' job dirs.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
W="$T/kr"
mkdir -p "$W"

t0=$(date +%s)
$DCC killrounds "$BOLTCCD" "$BOLTCC" "$W" "${BOLTCC_KILLROUNDS_SECS:-30}" >"$T/kr.out" 2>"$T/kr.err"
rc=$?
t1=$(date +%s)
head -n 1 "$T/kr.out"
set -- $(head -n 1 "$T/kr.out")
rounds=${2:-0} ok=${4:-0} farm=${6:-0} bad=${8:--1}
check "kill rounds ran (rc $rc, $((t1 - t0)) s): $(head -c 300 "$T/kr.err")" [ $rc -eq 0 ]
check "at least 15 SIGKILL rounds ($rounds)" [ "$rounds" -ge 15 ]
check "jobs compiled remotely during the rounds ($ok ok, $farm farm failures)" [ "$ok" -gt 10 ]
check "no client got a compile error on a good file ($bad)" [ "$bad" -eq 0 ]
grep '^BAD' "$T/kr.out" | head -n 5 | sed 's/^/    /'
nerr=$(grep -c 'COMPILE_ERROR' "$W/d.log")
check "no COMPILE_ERROR in the daemons' log ($nerr)" [ "$nerr" -eq 0 ]
grep -A1 'COMPILE_ERROR' "$W/d.log" | head -n 6 | sed 's/^/    /'
ngood=$(grep -c 'COMPILE_OK' "$W/d.log")
note "log: $ngood COMPILE_OK, $(grep -c 'CLI_DISCONNECT' "$W/d.log") CLI_DISCONNECT, $(grep -c 'scratch sweep: removed' "$W/d.log") sweeps that removed dirs"

# A worker killed with its process group mid-compile: the client sees
# the connection close at once, not when the compiler ends; and the
# compile dies with its worker: none of its processes (the wrapper, the
# gcc driver, cc1, as) is left 2 s later.  The wrapper stays the
# driver's parent (no exec), and the source keeps cc1 busy for seconds.
mkdir -p "$T/bin" "$T/src"
printf '#!/bin/sh\ngcc "$@"\n' >"$T/bin/slowcc"
chmod 755 "$T/bin/slowcc"
$PYTHON -c '
for i in range(2500):
    print("int f%d(int a) { int s = 0; for (int i = 0; i < a; i++) { s += i * %d ^ (s >> 3); if (s %% 7 == %d) s -= a; } return s; }" % (i, i + 1, i % 7))
' >"$T/src/s.c"
gcc -E "$T/src/s.c" >"$T/src/s.i"
$DCC build --proto 2 --doti "$T/src/s.i" -- "$T/bin/slowcc" -O2 -c s.c -o s.o >"$T/slow.bin"
set -- $($DCC freeport --pair)
KPORT=$1
# in a session of its own (the pid stays), as a service manager starts it
$PYTHON -c 'import os, sys; os.setsid(); os.execv(sys.argv[1], sys.argv[1:])' \
	"$BOLTCCD" --no-detach --listen 127.0.0.1 --port "$KPORT" --stats-port 0 \
	--tmp-dir "$W/scratch" --no-cache --allow-compiler "$T/bin/slowcc" \
	--log-file "$T/k.log" --log-level debug >/dev/null 2>&1 &
KPID=$!
_PIDS="$_PIDS $KPID"
$DCC wait-port "$KPORT" 15 || die "daemon for the group kill did not start"
$DCC replay "$KPORT" "$T/slow.bin" --out "$T/k.bin" --timeout 30 2>"$T/k.txt" &
RP=$!
# the compile's process group: the wrapper's (ps lists a script as
# "/bin/sh PATH ARGS"); its live members
compile_group() {
	ps -eo pgid=,args= | awk -v w="$T/bin/slowcc" \
		'$2 ~ /sh$/ && $3 == w { print $1; exit }'
}
group_left() {
	ps -eo pid=,pgid=,stat=,args= | awk -v g="$1" '$2 == g && $3 !~ /^Z/'
}
cc1_runs() {
	CPG=$(compile_group)
	[ -n "$CPG" ] && group_left "$CPG" | grep -q cc1
}
wait_until 20 cc1_runs || note "cc1 of the slow compile not seen"
sleep 0.3
note "the compile before the kill (pid pgid stat args):$(group_left "${CPG:-none}" | awk '{ printf " %s %s %s %s;", $1, $2, $3, $4 }')"
k0=$(date +%s)
$PYTHON -c 'import os, sys; os.killpg(int(sys.argv[1]), 9)' "$KPID"
wait $RP
k1=$(date +%s)
check "group kill mid-compile: the client saw the close within 3 s ($((k1 - k0)) s; $(cat "$T/k.txt"))" \
	[ $((k1 - k0)) -le 3 ]
wait "$KPID" 2>/dev/null
i=0
while [ -n "$(group_left "${CPG:-none}")" ] && [ $i -lt 20 ]; do
	sleep 0.1; i=$((i + 1))
done
left=$(group_left "${CPG:-none}" | awk '{ printf " %s %s %s %s;", $1, $2, $3, $4 }')
gone=0
[ -n "${CPG:-}" ] && [ -z "$left" ] && gone=1
check "group kill mid-compile: no process of the compile (group ${CPG:-not found}) left 2 s later (polled $i x 0.1 s):${left:- none}" \
	[ $gone = 1 ]
# after a failure: no CPU burnt for nobody
[ -n "${CPG:-}" ] && $PYTHON -c 'import os, sys
try: os.killpg(int(sys.argv[1]), 9)
except OSError: pass' "$CPG"

# A new daemon's start-up sweep leaves no dir of a dead worker behind.
# The killed workers must be gone first: until something reaps them they
# are zombies, and a zombie's pid is alive to kill(pid, 0), so the sweep
# leaves its dir for a later sweep (a busy machine takes a while).
dead_dirs_pids() {
	for d in "$W/scratch"/boltccd.*; do
		[ -d "$d" ] || continue
		p=$(echo "$d" | sed 's/.*boltccd\.[0-9]*\.\([0-9]*\)\..*/\1/')
		alive "$p" && return 1
	done
	return 0
}
wait_until 20 dead_dirs_pids || note "a job dir's worker still exists after 20 s"
start_boltccd --tmp-dir "$W/scratch" || die "restart"
left=""
for d in "$W/scratch"/boltccd.*; do
	[ -d "$d" ] || continue
	p=$(echo "$d" | sed 's/.*boltccd\.[0-9]*\.\([0-9]*\)\..*/\1/')
	alive "$p" || left="$left $(basename "$d")"
done
check "no job dir of a dead worker left after the sweep:${left:- none}" [ -z "$left" ]
finish
