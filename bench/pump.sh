#!/bin/sh
# bench/pump.sh - pump mode against plain mode on a real C project: client
# CPU per job, scan time per TU (cold and warm), bytes on the wire for a
# first and a second build, LZO and zstd.  See bench/README.md ("Pump
# mode").  Not part of `make check`.
#   sh bench/pump.sh                   (BOLTCC_BUILDDIR: build to measure)
#   BENCH_FETCH=0 BENCH_KEEP=1 ...     as for bench/run.sh
set -u
. "$(dirname "$0")/lib.sh"
exec python3 bench/pump.py "$@"
