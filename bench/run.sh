#!/bin/sh
# bench/run.sh - side-by-side timings: local gcc vs boltcc->boltccd vs
# distcc->distccd (and ccache).  See bench/README.md.  Not part of
# `make check`.  Needs a build (sh setup.sh) and, for the distcc columns,
# Debian's distcc package.
#   sh bench/run.sh                    both parts
#   BENCH_PART=A sh bench/run.sh       only the per-job cost
#   BENCH_N=100 BENCH_FETCH=0 ...      fewer jobs; don't try apt-get source
set -u
cd "$(dirname "$0")/.." || exit 1
: "${BOLTCC_BUILDDIR:=$(pwd)/build/normal}"
export BOLTCC_BUILDDIR
if [ ! -x "$BOLTCC_BUILDDIR/boltcc" ] || [ ! -x "$BOLTCC_BUILDDIR/boltccd" ]; then
	echo "bench: no build in $BOLTCC_BUILDDIR; run 'sh setup.sh' first" >&2
	exit 1
fi
exec python3 bench/bench.py "$@"
