#!/bin/sh
# make.sh - regenerate the clang serialized diagnostics fixtures (.dia) of
# tests/unit/test_dia.c and the seeds of tests/fuzz/fuzz_dia.c.  See README.
#
# The same three sources are compiled, by absolute path, in two
# directories whose names differ in length; each .dia is copied here as
# <case>-a.dia (from $DIR_A) and <case>-b.dia (from $DIR_B), and into
# tests/fuzz/seeds/dia.  test_dia.c knows both directory names: keep them.
#
# Usage: sh tests/data/dia/make.sh [CLANG]     (default: clang)
set -eu

CLANG=${1:-clang}
DIR_A=/tmp/x/a
DIR_B=/tmp/longer/path/b
here=$(cd "$(dirname "$0")" && pwd)
seeds=$here/../../fuzz/seeds/dia

write_sources() {
	mkdir -p "$1"
	cat >"$1/clean.c" <<'EOF'
int clean(int a)
{
	return a + 1;
}
EOF
	cat >"$1/w.h" <<'EOF'
static int helper(unsigned u, int i)
{
	return u < i;
}
EOF
	cat >"$1/warn.c" <<'EOF'
#include "w.h"
#warning "a warning from the main file"
#pragma message __FILE__

int warn(int a, int b)
{
	int unused;

	if (a = b)
		return helper(1u, a);
	return 0;
}
EOF
	cat >"$1/error.c" <<'EOF'
int error(void)
{
	_Static_assert(sizeof(int) == 0, __FILE__);
	return undeclared;
}
EOF
}

mkdir -p "$seeds"
for d in "$DIR_A" "$DIR_B"; do
	rm -rf "$d"
	write_sources "$d"
	case $d in
	"$DIR_A") s=a ;;
	*) s=b ;;
	esac
	for c in clean warn error; do
		# the error case fails to compile; its .dia is written anyway
		"$CLANG" -c -Wall -Wextra "$d/$c.c" -o "$d/$c.o" \
		    --serialize-diagnostics "$d/$c.dia" 2>/dev/null || true
		test -s "$d/$c.dia"
		cp "$d/$c.dia" "$here/$c-$s.dia"
		# a seed unless the same as directory a's (no path in it)
		if [ $s = a ] || ! cmp -s "$here/$c-a.dia" "$here/$c-b.dia"
		then
			cp "$d/$c.dia" "$seeds/$c-$s.dia"
		else
			rm -f "$seeds/$c-$s.dia"
		fi
	done
done
"$CLANG" --version | head -n 1
ls -l "$here"/*.dia
