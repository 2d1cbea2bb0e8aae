#!/bin/sh
# bench/run.sh - side-by-side timings: local gcc vs boltcc->boltccd vs
# distcc->distccd (and ccache).  See bench/README.md.  Not part of
# `make check`.  Needs a build (sh setup.sh) and, for the distcc columns,
# Debian's distcc package.
#   sh bench/run.sh                    both parts
#   BENCH_PART=A sh bench/run.sh       only the per-job cost
#   BENCH_N=100 BENCH_FETCH=0 ...      fewer jobs; don't try apt-get source
set -u
. "$(dirname "$0")/lib.sh"
exec python3 bench/bench.py "$@"
