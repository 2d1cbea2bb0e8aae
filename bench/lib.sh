# bench/lib.sh - sourced by the bench scripts (sh bench/X.sh): go to the
# source root and find the build to measure, $BOLTCC_BUILDDIR (default
# build/normal, what setup.sh makes), or stop saying how to make one.
cd "$(dirname "$0")/.." || exit 1
: "${BOLTCC_BUILDDIR:=$(pwd)/build/normal}"
export BOLTCC_BUILDDIR
if [ ! -x "$BOLTCC_BUILDDIR/boltcc" ] || [ ! -x "$BOLTCC_BUILDDIR/boltccd" ]; then
	echo "bench: no build in $BOLTCC_BUILDDIR; run 'sh setup.sh' first" >&2
	exit 1
fi
