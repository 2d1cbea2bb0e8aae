#!/bin/sh
# t_cluster.sh - a 3-host farm of network namespaces (tests/cluster/
# cluster.py): real gcc compiles of a generated project plus sample/
# through boltcc; host 0's daemon is SIGKILLed and host 1's link is cut
# mid-build.  The build must succeed, every object must be byte-identical
# to a local build, and the client must count the faults.  Needs root
# (CI runs as root); skips (77) when namespaces cannot be made.
. "$(dirname "$0")/lib.sh"
run_faults 240 basic "${BOLTCC_CLUSTER_FILES:-8}" \
	"3 hosts, a daemon killed and a link cut mid-build"
