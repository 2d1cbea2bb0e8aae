#!/bin/sh
# bench/cache.sh - the artifact cache against ccache (cold and warm) and
# against boltcc without the cache.  See bench/README.md.  Not part of
# `make check`.  Needs a build (sh setup.sh) and ccache.
#   sh bench/cache.sh
#   BENCH_REPS=5 BENCH_J=4 sh bench/cache.sh
set -u
. "$(dirname "$0")/lib.sh"
exec python3 bench/cache.py "$@"
