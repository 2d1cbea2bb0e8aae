#!/bin/sh
# bench/pump.sh - pump mode against plain mode on a real C project: client
# CPU per job, scan time per TU (cold and warm), bytes on the wire for a
# first and a second build, LZO and zstd.  See bench/README.md ("Pump
# mode").  Not part of `make check`.
#   sh bench/pump.sh                   (BOLTCC_BUILDDIR: build to measure)
#   BENCH_FETCH=0 BENCH_KEEP=1 ...     as for bench/run.sh
set -u
cd "$(dirname "$0")/.." || exit 1
: "${BOLTCC_BUILDDIR:=$(pwd)/build/normal}"
export BOLTCC_BUILDDIR
if [ ! -x "$BOLTCC_BUILDDIR/boltcc" ] || [ ! -x "$BOLTCC_BUILDDIR/boltccd" ]; then
	echo "bench: no build in $BOLTCC_BUILDDIR; run 'sh setup.sh' first" >&2
	exit 1
fi
exec python3 bench/pump.py "$@"
