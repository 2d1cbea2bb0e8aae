#!/bin/sh
# bench/cluster.sh - the farm on simulated networks (network namespaces,
# tests/cluster/cluster.py): makespan of 512 x 200 ms test-compiler jobs on
# 8 hosts x 2 slots against the ideal, boltcc vs stock distcc, per link
# profile; then a real project's bytes on the wire and build time per
# profile and mode.  Root only; not part of `make check`.  See
# bench/README.md ("Cluster").
#   sh bench/cluster.sh                 # both parts
#   sh bench/cluster.sh makespan --profiles tb5 --parallel 16,24
#   sh bench/cluster.sh project --profiles 1gbe
set -u
. "$(dirname "$0")/lib.sh"
if [ ! -x "$BOLTCC_BUILDDIR/tests/cluster/fakecc" ]; then
	make -C "$BOLTCC_BUILDDIR" tests/cluster/fakecc >/dev/null || exit 1
fi
if [ $# -eq 0 ]; then
	set -- all
fi
exec python3 bench/cluster.py "$@" --build "$BOLTCC_BUILDDIR"
