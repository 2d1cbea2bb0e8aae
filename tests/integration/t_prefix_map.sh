#!/bin/sh
# t_prefix_map.sh - a user's path prefix maps in pump mode: gcc and clang,
# -g0 and -g, with -ffile-prefix-map=<checkout>=/src (what a team sets so
# objects do not name the checkout), the -fdebug-prefix-map +
# -fmacro-prefix-map pair, and two maps that both match (gcc: the last
# one wins); sources, -I and the output under the checkout, absolute as
# Xcode writes them, __FILE__ in the code.  Each job must go out in pump
# mode (BOLT pump to boltccd, and distcc protocol 3 to boltccd) and its
# object must be byte-identical to the local compile: boltccd compiles in
# a re-created tree whose -ffile-prefix-map=<root>= would otherwise stop
# the user's maps from applying (one substitution per path).
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc clang

P=$T/home/alice/App
mkdir -p "$P/Sources/inc" "$P/Derived/obj"
cat >"$P/Sources/main.c" <<'EOF'
#include <stdio.h>
#include "conf.h"
static const char where[] = __FILE__;
int main(void)
{
	printf("%s %d\n", where, CONF);
	return 0;
}
EOF
printf '#define CONF 42\n' >"$P/Sources/inc/conf.h"

start_boltccd || die "boltccd did not start"
CDIR=$(new_client_dir)

# counter NAME: a client counter of $CDIR
counter() { client_stat "$CDIR" "$1"; }

n=0
# map_case LABEL HOSTS CC MAPS...: compile main.c with the maps through
# the farm and locally, in $P; objects must be identical.  $GS: the -g
# levels (default both)
map_case() {
	_label=$1; _hosts=$2; _cc=$3; shift 3
	for _g in ${GS:--g0 -g}; do
		n=$((n + 1))
		_pump=$(counter jobs_pump)
		(cd "$P" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$_hosts" \
			DISTCC_FALLBACK=0 "$BOLTCC" "$_cc" -O1 $_g "$@" \
			-I"$P/Sources/inc" -c "$P/Sources/main.c" \
			-o "$P/Derived/obj/r$n.o") 2>"$T/err.txt"
		check "$_label $_cc $_g: boltcc exit 0" test $? = 0 ||
			sed 's/^/    /' "$T/err.txt"
		(cd "$P" && "$_cc" -O1 $_g "$@" -I"$P/Sources/inc" \
			-c "$P/Sources/main.c" -o "$P/Derived/obj/l$n.o") ||
			die "local $_cc"
		check "$_label $_cc $_g: went out in pump mode" \
			test "$(counter jobs_pump)" = $((_pump + 1))
		check "$_label $_cc $_g: object byte-identical to the local one" \
			same_file "$P/Derived/obj/l$n.o" "$P/Derived/obj/r$n.o"
		if [ "$_g" = -g ]; then
			check "$_label $_cc -g: the checkout's path is not in the object" \
				sh -c "! grep -q '$P' '$P/Derived/obj/r$n.o'"
		fi
	done
}

BOLT="127.0.0.1:$DPORT,bolt"
P3="127.0.0.1:$DPORT,cpp,lzo,distcc"
for cc in gcc clang; do
	map_case "file-prefix-map" "$BOLT" $cc "-ffile-prefix-map=$P=/src"
	map_case "debug+macro maps" "$BOLT" $cc "-fdebug-prefix-map=$P=/src" \
		"-fmacro-prefix-map=$P=/src"
	# distcc's protocol 3 sends a file reached by an absolute path with
	# a "#line 1" line in front, so clang's DWARF 5 MD5 of it differs
	# with -g, maps or not (doc/fidelity.md); -g0 is identical
	gs="-g0 -g"
	[ $cc = clang ] && gs=-g0
	GS=$gs map_case "protocol 3, file-prefix-map" "$P3" $cc \
		"-ffile-prefix-map=$P=/src"
done
# two maps that both match: gcc applies the last one (and so must we)
map_case "two maps" "$BOLT" gcc "-ffile-prefix-map=$T/home=/h" \
	"-ffile-prefix-map=$P=/src"
map_case "two maps, other order" "$BOLT" gcc "-ffile-prefix-map=$P=/src" \
	"-ffile-prefix-map=$T/home=/h"
check "daemon still alive" alive "$DPID"
finish
