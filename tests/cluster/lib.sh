# tests/cluster/lib.sh - sourced by t_cluster*.sh: what a farm of network
# namespaces needs (root, the tools, the harness, delayrelay), and
# run_faults to run one of faults.py's scenarios and report it.
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

# run_faults WATCHDOG_S SCENARIO FILES LABEL: faults.py on a 10gbe farm
# of 3 hosts; it tears its cluster down itself, also on failure or
# SIGTERM (lib.sh's cleanup TERMs it, then KILLs; `cluster.py gc` is the
# net).
run_faults() {
	watchdog "$1"
	$PYTHON "$CL/faults.py" --build "$BOLTCC_BUILDDIR" --work "$T/work" \
		--scenario "$2" --profile 10gbe --files "$3" &
	_fpid=$!
	_PIDS="$_PIDS $_fpid"
	wait $_fpid
	_rc=$?
	case $_rc in
	0) pass "$4" ;;
	77) skip "cluster harness cannot run here" ;;
	*) fail "fault scenario $2 (exit $_rc)" ;;
	esac
	finish
}
