#!/bin/sh
# bench/cache.sh - the artifact cache against ccache (cold and warm) and
# against boltcc without the cache.  See bench/README.md.  Not part of
# `make check`.  Needs a build (sh setup.sh) and ccache.
#   sh bench/cache.sh
#   BENCH_REPS=5 BENCH_J=4 sh bench/cache.sh
set -u
cd "$(dirname "$0")/.." || exit 1
: "${BOLTCC_BUILDDIR:=$(pwd)/build/normal}"
export BOLTCC_BUILDDIR
if [ ! -x "$BOLTCC_BUILDDIR/boltcc" ] || [ ! -x "$BOLTCC_BUILDDIR/boltccd" ]; then
	echo "bench: no build in $BOLTCC_BUILDDIR; run 'sh setup.sh' first" >&2
	exit 1
fi
exec python3 bench/cache.py "$@"
