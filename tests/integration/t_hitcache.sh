#!/bin/sh
# t_hitcache.sh - the client's local tier of the artifact cache
# (client/hitcache.h): building the same tree again is served from this
# machine's disk, with the farm gone; outputs (object, .d, replayed
# warnings) identical to a local compile; never a stale result after a
# header, a flag or the compiler changed; a damaged entry is found out
# and not served; two builds of the same tree at once stay correct;
# BOLTCC_LOCAL_CACHE_SIZE=0 turns it off.  Pump mode and plain mode
# (direct mode's key), gcc and clang.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc clang

S=$T/src
mkdir -p "$S/inc" "$T/bin"
cat >"$S/m.c" <<'EOF'
#include "h.h"
int m(int a) { int unused; return a * H; }
EOF
echo '#define H 3' >"$S/inc/h.h"
ln -s "$(command -v gcc)" "$T/bin/gcc"

start_boltccd || die "boltccd did not start"
CDIR=$(new_client_dir)
hosts() { echo "127.0.0.1:$DPORT,bolt${1:-}"; }
cs() { client_stat "$CDIR" "$1"; }

# build TAG HOSTS CC [FLAGS...]: m.c through the farm and locally, each
# to the same paths every time (as a build does: the .d names the
# object), then kept as o/TAG.{o,d,err} and o/TAG.l.{o,d,err}
build() {
	_tag=$1; _hosts=$2; shift 2
	mkdir -p "$S/o" "$S/lo"
	(cd "$S" && "$@" -Iinc -Wall -MMD -MF lo/m.d -c m.c -o lo/m.o) \
		2>"$S/o/$_tag.l.err" || return 1
	mv "$S/lo/m.o" "$S/o/$_tag.l.o" && mv "$S/lo/m.d" "$S/o/$_tag.l.d"
	(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$_hosts" \
		DISTCC_FALLBACK=${FB:-0} "$BOLTCC" "$@" -Iinc -Wall -MMD \
		-MF o/m.d -c m.c -o o/m.o) 2>"$S/o/$_tag.err" || return 1
	mv "$S/o/m.o" "$S/o/$_tag.o" && mv "$S/o/m.d" "$S/o/$_tag.d"
}
# same_outputs TAG: .o and .d identical to local, and the compiler's
# messages too (boltcc's own notes aside) unless the job went plain,
# where gcc has no source line to quote under a warning (doc/fidelity.md)
same_outputs() {
	cmp -s "$S/o/$1.l.o" "$S/o/$1.o" &&
		sed 's|^lo/|o/|' "$S/o/$1.l.d" | cmp -s - "$S/o/$1.d" || return 1
	case $1 in plain-*) return 0 ;; esac
	grep -v '^boltcc' "$S/o/$1.err" | cmp -s "$S/o/$1.l.err" -
}

# changed LABEL TAG HOSTS CC FLAGS...: after a change, no local hit, and
# the outputs are the new local compile's
changed() {
	_what=$1; _tag=$2; shift 2
	_l=$(cs cache_hits_local)
	build "$_tag" "$@" || die "$_what: build failed"
	check "$_what is no local hit" test "$(cs cache_hits_local)" = "$_l"
	check "$_what: outputs identical to the new local compile" \
		same_outputs "$_tag"
}

for mode in pump plain; do
	for cc in gcc clang; do
		H=$(hosts)
		[ $mode = plain ] && H=$(hosts ,plain)
		l0=$(cs cache_hits_local)
		build $mode-$cc-1 "$H" $cc -O2 || die "$mode $cc first build"
		# plain: the second build records direct mode's manifest
		build $mode-$cc-1b "$H" $cc -O2 || die "$mode $cc second build"
		check "$mode $cc: first builds identical to local" \
			same_file "$S/o/$mode-$cc-1.o" "$S/o/$mode-$cc-1.l.o"
		# the farm goes away: the next build needs no connection
		kill "$DPID"; wait "$DPID" 2>/dev/null
		sleep 2	# files younger than 2 s keep direct mode off
		build $mode-$cc-2 "$H" $cc -O2 ||
			fail "$mode $cc: rebuild with the farm down failed"
		check "$mode $cc: the rebuild is a local hit (farm down)" \
			test "$(cs cache_hits_local)" -gt "$l0"
		check "$mode $cc: .o, .d and warnings identical to local" \
			same_outputs $mode-$cc-2
		start_boltccd || die "boltccd did not restart"
		H=$(hosts)
		[ $mode = plain ] && H=$(hosts ,plain)
		echo '#define H 4' >"$S/inc/h.h"
		changed "$mode $cc: a changed header" $mode-$cc-3 "$H" $cc -O2
		echo '#define H 3' >"$S/inc/h.h"
		changed "$mode $cc: a changed flag" $mode-$cc-4 "$H" $cc -O1
	done
done

PUMP=$(hosts)
# a changed compiler at the same path: never the old compiler's object
# (the farm then refuses it too: another identity; compiled here)
l1=$(cs cache_hits_local)
build cc-1 "$PUMP" "$T/bin/gcc" -O2 || die "bin/gcc (gcc)"
build cc-2 "$PUMP" "$T/bin/gcc" -O2 || die "bin/gcc (gcc) again"
check "same compiler again: a local hit" \
	test "$(cs cache_hits_local)" -gt "$l1"
rm -f "$T/bin/gcc"
ln -s "$(command -v clang)" "$T/bin/gcc"
FB=1
changed "another compiler at the same path" cc-3 "$PUMP" "$T/bin/gcc" -O2
FB=0

# a damaged entry: found out, removed, not served; the job is right
for f in "$CDIR"/hits/*/*; do
	printf 'X' | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null
done
c0=$(cs local_cache_corrupt)
build damaged "$PUMP" gcc -O2 || die "after damage"
check "a damaged entry is counted and not served" \
	test "$(cs local_cache_corrupt)" -gt "${c0:-0}"
check "... and the object is right" same_outputs damaged

# two builds of the same tree at once, each 20 times
mkdir -p "$S/par1" "$S/par2"
for k in 1 2; do
	(
		i=0
		while [ $i -lt 20 ]; do
			i=$((i + 1))
			(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$PUMP" \
				DISTCC_FALLBACK=0 "$BOLTCC" gcc -O2 -Iinc -Wall \
				-c m.c -o "par$k/m.o") 2>/dev/null || exit 1
			cp "$S/par$k/m.o" "$S/o/par$k-$i.o"
		done
	) &
	eval "P$k=\$!"
done
wait "$P1"; r1=$?
wait "$P2"; r2=$?
check "two builds at once: all jobs succeeded" test "$r1$r2" = 00
(cd "$S" && gcc -O2 -Iinc -Wall -c m.c -o o/par.l.o 2>/dev/null)
bad=0
for f in "$S"/o/par[12]-*.o; do cmp -s "$f" "$S/o/par.l.o" || bad=$((bad + 1)); done
check "two builds at once: every object identical to local ($bad differ)" \
	test $bad = 0

# off: no local hit, the farm answers
l1=$(cs cache_hits_local)
(cd "$S" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$PUMP" DISTCC_FALLBACK=0 \
	BOLTCC_LOCAL_CACHE_SIZE=0 "$BOLTCC" gcc -O2 -Iinc -Wall -c m.c \
	-o o/off.o) 2>/dev/null || die "size 0"
check "BOLTCC_LOCAL_CACHE_SIZE=0: no local hit" \
	test "$(cs cache_hits_local)" = "$l1"
check "daemon still alive" alive "$DPID"
finish
