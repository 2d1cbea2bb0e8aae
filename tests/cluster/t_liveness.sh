#!/bin/sh
# t_liveness.sh - a boltccd lets go of a client that went away
# mid-request once the link is cut, in seconds (TCP keepalive on accepted
# sockets), not after --request-timeout; such a request takes no worker
# (daemon/intake.h), and a silent client whose link is up is kept
# (tests/cluster/liveness.py).  Needs root; skips (77) when namespaces
# cannot be made.
. "$(dirname "$0")/lib.sh"
watchdog 120
$PYTHON "$CL/liveness.py" --build "$BOLTCC_BUILDDIR" &
_lpid=$!
_PIDS="$_PIDS $_lpid"
wait $_lpid
case $? in
0) pass "a dead client's worker freed by keepalive, a live one kept" ;;
77) skip "cluster harness cannot run here" ;;
*) fail "liveness (see above)" ;;
esac
finish
