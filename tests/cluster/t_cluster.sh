#!/bin/sh
# t_cluster.sh - a 3-host farm of network namespaces (tests/cluster/
# cluster.py): real gcc compiles of a generated project plus sample/
# through boltcc; host 0's daemon is SIGKILLed and host 1's link is cut
# mid-build.  The build must succeed, every object must be byte-identical
# to a local build, and the client must count the faults.  Needs root
# (CI runs as root); skips (77) when namespaces cannot be made.
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
watchdog 240

# faults.py tears its cluster down itself, also on failure or SIGTERM
# (lib.sh's cleanup TERMs it, then KILLs; `cluster.py gc` is the net)
$PYTHON "$CL/faults.py" --build "$BOLTCC_BUILDDIR" --work "$T/work" \
	--scenario basic --profile 10gbe --files "${BOLTCC_CLUSTER_FILES:-8}" &
FPID=$!
_PIDS="$_PIDS $FPID"
wait $FPID
rc=$?
case $rc in
0) pass "3 hosts, a daemon killed and a link cut mid-build" ;;
77) skip "cluster harness cannot run here" ;;
*) fail "fault scenario (exit $rc)" ;;
esac
finish
