#!/bin/sh
# bench/daemoncpu.sh - CPU time the daemons spend per job (their workers
# and the compilers they run included), on loopback: two boltccd with
# caches, N sequential jobs of the test compiler (tests/cluster/fakecc,
# 0 ms), every source new (every job a cache miss).  Reads the daemons'
# own, their reaped children's and their live children's (the cache
# keeper's) CPU from /proc before and after.
# Linux only (procfs).  Not part of `make check`.
#
#   sh bench/daemoncpu.sh [BUILD_DIR [N [BOLTCCD_ARGS...]]]
#   sh bench/daemoncpu.sh build/normal 300 --no-cache
set -u
B=${1:-${BOLTCC_BUILDDIR:-$(cd "$(dirname "$0")/.." && pwd)/build/normal}}
N=${2:-300}
[ $# -ge 2 ] && shift 2 || shift $#
B=$(cd "$B" && pwd) || exit 1
for f in boltcc boltccd tests/cluster/fakecc; do
	[ -x "$B/$f" ] || { echo "daemoncpu: $B/$f missing (make -C $B $f)" >&2; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/bc-daemoncpu.XXXXXX") || exit 1
PIDS=""
cleanup() {
	[ -n "$PIDS" ] && kill $PIDS 2>/dev/null
	sleep 0.3
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
PATH=$B/tests/cluster:$PATH
export PATH
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
P1=$(free_port) P2=$(free_port)
for p in $P1 $P2; do
	"$B/boltccd" --no-detach --listen 127.0.0.1 --port "$p" --stats-port 0 \
	    --jobs 2 --allow-compiler fakecc --cache-dir "$T/cache-$p" \
	    --pid-file "$T/pid-$p" --log-file "$T/log-$p" "$@" &
	PIDS="$PIDS $!"
done
i=0
while [ ! -s "$T/pid-$P1" ] || [ ! -s "$T/pid-$P2" ]; do
	sleep 0.1; i=$((i + 1))
	[ $i -gt 50 ] && { echo "daemoncpu: daemons did not start" >&2; exit 1; }
done
sleep 0.3
mkdir "$T/src" "$T/client"
cd "$T/src" || exit 1
i=0
while [ $i -le "$N" ]; do
	echo "int f$i(void) { return $i; }" >"s$i.c"
	i=$((i + 1))
done
BOLTCC_HOSTS="127.0.0.1:$P1/2,bolt 127.0.0.1:$P2/2,bolt"
BOLTCC_DIR=$T/client DISTCC_FALLBACK=0
export BOLTCC_HOSTS BOLTCC_DIR DISTCC_FALLBACK
# a daemon's own and reaped children's ticks, plus those of its children
# still alive (the cache keeper lives as long as the daemon)
ticks() {
	for p in $P1 $P2; do
		d=$(cat "$T/pid-$p")
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$d/stat"
		for s in /proc/[0-9]*/stat; do
			awk -v d="$d" '{ sub(/^.*\) /, ""); if ($2 == d) print $12 + $13 + $14 + $15 }' "$s" 2>/dev/null
		done
	done | awk '{ s += $1 } END { print s }'
}
"$B/boltcc" fakecc -c s0.c -o s0.o || exit 1	# first use: identities
c0=$(ticks); t0=$(date +%s%N)
fails=0 i=1
while [ $i -le "$N" ]; do
	"$B/boltcc" fakecc -c "s$i.c" -o "s$i.o" 2>>"$T/err" || fails=$((fails + 1))
	i=$((i + 1))
done
t1=$(date +%s%N); c1=$(ticks)
hz=$(getconf CLK_TCK)
awk -v c="$((c1 - c0))" -v hz="$hz" -v n="$N" -v w="$((t1 - t0))" -v f="$fails" 'BEGIN {
	printf "daemons: %.2f ms CPU per job; wall %.2f ms per job; %d jobs, %d failed\n",
	    c * 1000 / hz / n, w / 1e6 / n, n, f }'
