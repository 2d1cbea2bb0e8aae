#!/bin/sh
# t_fidelity.sh - byte identity of farm objects with local ones
# (doc/fidelity.md).  -g0: identical for gcc and clang.  -g in plain mode:
# the only differences allowed are the DWARF line-table ones the doc
# explains (macro-shifted columns for gcc; missing DWARF 5 MD5 checksums for
# clang), and the compilation directory must be the client's.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc readelf
start_boltccd || die "cannot start boltccd"
mkdir -p "$T/src/sub" && cd "$T/src" || die "no src"
cat >fid.h <<'X'
#define FID_SCALE 7
struct point { int x, y; };
X
cat >sub/fid.c <<'X'
#include <stdio.h>
#include "../fid.h"
static int scale(struct point p) { return (p.x + p.y) * FID_SCALE; }
int main(void)
{
	struct point p = { 1, 2 };
	printf("%s:%d %d\n", __FILE__, __LINE__, scale(p));
	return 0;
}
X
BOLTCC_DIR=$(new_client_dir)
BOLTCC_HOSTS="127.0.0.1:$DPORT,bolt,plain"	# plain mode: see t_pump_client.sh for pump
DISTCC_FALLBACK=0
export BOLTCC_DIR BOLTCC_HOSTS DISTCC_FALLBACK

# secdiff A B: names of the sections whose contents differ
secdiff() {
	for _s in $(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) .*/\1/p'); do
		[ "$_s" = NULL ] && continue
		_a=$(readelf -x "$_s" "$1" 2>/dev/null | tail -n +3)
		_b=$(readelf -x "$_s" "$2" 2>/dev/null | tail -n +3)
		[ "$_a" = "$_b" ] || printf '%s ' "$_s"
	done
}
# subset "LIST" ALLOWED...: every word of LIST is one of ALLOWED
subset() {
	_l=$1; shift
	for _w in $_l; do in_list "$_w" "$@" || return 1; done
	return 0
}
comp_dir_is_cwd() {
	readelf --debug-dump=info "$1" 2>/dev/null | grep -m1 DW_AT_comp_dir |
		grep -q ": $T/src\$"
}

for cc in gcc clang; do
	command -v $cc >/dev/null 2>&1 || { note "$cc not installed"; continue; }
	for opt in -O0 -O2; do
		rm -f l.o r.o
		$cc $opt -g0 -c sub/fid.c -o l.o
		"$BOLTCC" $cc $opt -g0 -c sub/fid.c -o r.o 2>"$T/err.txt"
		check "$cc $opt -g0: identical to local" same_file l.o r.o
		rm -f l.o r.o
		$cc $opt -g -c sub/fid.c -o l.o
		"$BOLTCC" $cc $opt -g -c sub/fid.c -o r.o 2>"$T/err.txt"
		check "$cc $opt -g: farm object produced" elf_object r.o
		d=$(secdiff l.o r.o)
		note "$cc $opt -g: sections that differ: ${d:-none}"
		if [ $cc = gcc ]; then
			check "$cc $opt -g: only .debug_line may differ" \
				subset "$d" .debug_line
		else
			check "$cc $opt -g: only line-table related sections differ" \
				subset "$d" .debug_line .rela.debug_line .debug_info \
				.debug_line_str .debug_str .debug_str_offsets
		fi
		check "$cc $opt -g: DW_AT_comp_dir is the client's directory" \
			comp_dir_is_cwd r.o
		check "$cc $opt -g: code identical once debug info is stripped" \
			same_code l.o r.o
		check "$cc $opt -g: no daemon temp dir in the object" \
			sh -c "! grep -Eq 'boltccd[._]' r.o"
	done
done
finish
