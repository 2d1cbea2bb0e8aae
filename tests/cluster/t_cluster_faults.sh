#!/bin/sh
# t_cluster_faults.sh - every fault on a 3-host farm of network
# namespaces (tests/cluster/cluster.py), faults.py's heavier scenario:
# after t_cluster.sh's kill and link cut, a second build with a black-hole
# daemon, 30% packet drop, +20 ms delay and another link cut.  All objects
# byte-identical to a local build, no failed job, faults counted.  Run by
# hand from the build dir: sh $SRCDIR/tests/cluster/t_cluster_faults.sh
# Needs root; skips (77) when namespaces cannot be made.
. "$(dirname "$0")/../integration/lib.sh"

need_binaries
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
need_tool gcc
need_tool make
need_tool ip
need_tool tc
CL="$BOLTCC_SRCDIR/tests/cluster"
$PYTHON "$CL/cluster.py" check || skip "network namespaces not available"
# a run killed before its cleanup leaves namespaces: remove those of
# dead runs (never those of a live one)
$PYTHON "$CL/cluster.py" gc >/dev/null 2>&1 || true
[ -x "$BOLTCC_BUILDDIR/tests/cluster/delayrelay" ] ||
	die "tests/cluster/delayrelay not built (make check builds it)"
watchdog 400

# faults.py tears its cluster down itself, also on failure or SIGTERM
# (lib.sh's cleanup TERMs it, then KILLs; `cluster.py gc` is the net)
$PYTHON "$CL/faults.py" --build "$BOLTCC_BUILDDIR" --work "$T/work" \
	--scenario all --profile 10gbe --files "${BOLTCC_CLUSTER_FILES:-16}" &
FPID=$!
_PIDS="$_PIDS $FPID"
wait $FPID
rc=$?
case $rc in
0) pass "3 hosts: kill, link cut, black hole, drop, delay" ;;
77) skip "cluster harness cannot run here" ;;
*) fail "fault scenario (exit $rc)" ;;
esac
finish
