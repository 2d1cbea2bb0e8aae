#!/bin/sh
# t_cluster_faults.sh - every fault on a 3-host farm of network
# namespaces (tests/cluster/cluster.py), faults.py's heavier scenario:
# after t_cluster.sh's kill and link cut, a second build with a black-hole
# daemon, 30% packet drop, +20 ms delay and another link cut.  All objects
# byte-identical to a local build, no failed job, faults counted.  Run by
# hand from the build dir: sh $SRCDIR/tests/cluster/t_cluster_faults.sh
# Needs root; skips (77) when namespaces cannot be made.
. "$(dirname "$0")/lib.sh"
run_faults 400 all "${BOLTCC_CLUSTER_FILES:-16}" \
	"3 hosts: kill, link cut, black hole, drop, delay"
