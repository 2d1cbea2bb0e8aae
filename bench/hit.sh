#!/bin/sh
# bench/hit.sh - one cache hit: boltcc from the farm, boltcc from its local
# tier, ccache (direct mode) and the compile itself, with hyperfine, side
# by side in one run.  See bench/README.md ("Hit bench").  Not part of
# `make check`.  Needs a build (sh setup.sh), hyperfine and ccache.
#   sh bench/hit.sh
#   BENCH_ROUNDS=5 BENCH_RUNS=50 BENCH_HIT_FILE=inflate.c sh bench/hit.sh
set -u
. "$(dirname "$0")/lib.sh"
exec python3 bench/hit.py "$@"
