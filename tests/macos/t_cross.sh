#!/bin/sh
# t_cross.sh - the macOS cross build works and its programs are what a Mac
# can run:
#
#   sh tests/macos/t_cross.sh OUTDIR [ARCH...]     (default: arm64 x86_64)
#
# For each architecture: contrib/macos/cross-build.sh OUTDIR/ARCH ARCH
# --tarball --test-programs (from this source tree, -Wall -Wextra
# -Werror), then
#  * file(1): boltcc, boltccd, boltcc-ssh are Mach-O 64-bit executables
#    of ARCH;
#  * llvm-objdump --macho --dylibs-used: they load /usr/lib/libSystem only
#    (every other library is linked in statically);
#  * the load commands: platform macos, minos 13.0, on arm64 a code
#    signature (Apple silicon refuses to run unsigned code);
#  * --test-programs: every unit test, fuzz replay and test tool of make
#    check compiles and links for macOS too (not run: this is Linux);
#  * llvm-nm: the macOS-only code paths are the ones linked: boltccd
#    imports launch_activate_socket (launchd sockets), all three take
#    SHA-256 from CommonCrypto (CC_SHA256_*) and none from OpenSSL,
#    boltcc imports _NSGetExecutablePath, boltcc-ssh getpeereid;
#  * the tarball: install.sh, the programs, man pages, the xcconfig and
#    the LaunchDaemon plist naming /usr/local/bin/boltccd, docs; install.sh
#    is valid sh and refuses to run anywhere but on macOS.
# Prints "ok   ..." / "FAIL ..." per check; exit status 1 if any failed.
# tests/run.sh counts the lines.
set -u
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [ARCH...]" >&2; exit 2; }
OUT=$1
shift
[ $# -gt 0 ] || set -- arm64 x86_64
SRC=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
FAILED=0
OBJDUMP=$(command -v llvm-objdump-14 || command -v llvm-objdump || echo llvm-objdump-14)
NM=$(command -v llvm-nm-14 || command -v llvm-nm || echo llvm-nm-14)

check() {
	_what=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "ok   $_what"
	else
		echo "FAIL $_what"
		FAILED=1
	fi
}

# imports PROG SYMBOL: PROG has SYMBOL as an undefined (imported) symbol
imports() { "$NM" -u "$1" | grep -qx "$2"; }
# lacks PROG REGEX: no symbol of PROG matches REGEX
lacks() { ! "$NM" "$1" | grep -Eq "$2"; }
# only_libsystem PROG: the dylibs PROG loads are libSystem (and /usr/lib)
only_libsystem() {
	_libs=$("$OBJDUMP" --macho --dylibs-used "$1" | sed 1d | awk '{print $1}')
	[ "$_libs" = /usr/lib/libSystem.B.dylib ]
}
# header PROG REGEX: a load command line of PROG matches REGEX
header() { "$OBJDUMP" --macho --all-headers "$1" | grep -Eq "$2"; }

for ARCH in "$@"; do
	D=$OUT/$ARCH
	rm -rf "$D"
	start=$(date +%s)
	if sh "$SRC/contrib/macos/cross-build.sh" "$D" "$ARCH" --tarball \
	    --test-programs >"$OUT/cross-build-$ARCH.log" 2>&1; then
		echo "ok   $ARCH: cross-build.sh ($(($(date +%s) - start)) s)"
	else
		echo "FAIL $ARCH: cross-build.sh (log: $OUT/cross-build-$ARCH.log)"
		tail -n 25 "$OUT/cross-build-$ARCH.log" | sed 's/^/    /'
		FAILED=1
		continue
	fi
	case $ARCH in arm64) want=arm64 ;; *) want=x86_64 ;; esac
	for p in boltcc boltccd boltcc-ssh; do
		check "$ARCH: $p is a Mach-O 64-bit $want executable" sh -c \
			"file -b '$D/$p' | grep -q '^Mach-O 64-bit $want executable'"
		check "$ARCH: $p loads only /usr/lib/libSystem.B.dylib" only_libsystem "$D/$p"
		check "$ARCH: $p: platform macos, minos 13.0" sh -c \
			"'$OBJDUMP' --macho --all-headers '$D/$p' | grep -A4 LC_BUILD_VERSION |
			 grep -q 'minos 13.0'"
		# arm64 macOS runs only signed code (Zig's linker signs ad hoc);
		# Intel Macs need no signature and Zig writes none
		[ "$ARCH" = arm64 ] && check "$ARCH: $p has a code signature" \
			header "$D/$p" 'cmd LC_CODE_SIGNATURE'
		check "$ARCH: $p: SHA-256 from CommonCrypto" imports "$D/$p" _CC_SHA256_Init
	done
	check "$ARCH: boltccd imports launch_activate_socket" \
		imports "$D/boltccd" _launch_activate_socket
	check "$ARCH: boltcc imports _NSGetExecutablePath" \
		imports "$D/boltcc" __NSGetExecutablePath
	check "$ARCH: boltcc-ssh imports getpeereid" imports "$D/boltcc-ssh" _getpeereid
	check "$ARCH: boltcc and boltccd link no OpenSSL" sh -c \
		"! '$NM' '$D/boltcc' '$D/boltccd' | grep -Eq ' _(SHA256_Init|OPENSSL_init_crypto)$'"
	check "$ARCH: boltcc-ssh has libssh2 and OpenSSL linked in" sh -c \
		"'$NM' '$D/boltcc-ssh' | grep -q ' T _libssh2_session_init_ex$' &&
		 '$NM' '$D/boltcc-ssh' | grep -q ' T _OPENSSL_init_crypto$'"
	check "$ARCH: boltccd has sqlite3 linked in" sh -c \
		"'$NM' '$D/boltccd' | grep -q ' T _sqlite3_open_v2$'"

	# the test programs (make check's, compiled, not run)
	nprog=0
	nbad=0
	for t in $(printf 'print-check-programs:\n\t@echo $(check_PROGRAMS)\n' |
	    make -s -C "$D/build-$ARCH" -f Makefile -f - print-check-programs); do
		nprog=$((nprog + 1))
		file -b "$D/build-$ARCH/$t" | grep -q "^Mach-O 64-bit $want executable" ||
			{ nbad=$((nbad + 1)); echo "    not a Mach-O $want executable: $t"; }
	done
	check "$ARCH: make check's $nprog test programs are Mach-O $want executables" \
		test "$nprog" -ge 20 -a "$nbad" = 0

	# the binary tarball
	tgz=$(ls "$D"/boltcc-*-macos-"$ARCH".tar.gz 2>/dev/null | head -n 1)
	check "$ARCH: --tarball wrote boltcc-VERSION-macos-$ARCH.tar.gz" test -n "$tgz"
	[ -n "$tgz" ] || continue
	X=$D/unpacked
	rm -rf "$X"
	mkdir -p "$X"
	tar -xzf "$tgz" -C "$X"
	top=$X/$(basename "$tgz" .tar.gz)
	R=$top/root/usr/local
	for f in bin/boltcc bin/boltccd libexec/boltcc/boltcc-ssh \
	    share/man/man1/boltcc.1 share/man/man8/boltccd.8 \
	    share/boltcc/boltcc.xcconfig \
	    share/boltcc/launchd/org.boltcc.boltccd.plist \
	    share/boltcc/launchd/install-launchd.sh \
	    share/boltcc/systemd/boltccd.service \
	    share/doc/boltcc/xcode.md share/doc/boltcc/macos.md; do
		check "$ARCH: tarball has /usr/local/$f" test -f "$R/$f"
	done
	check "$ARCH: tarball's boltccd is the one built" cmp "$R/bin/boltccd" "$D/boltccd"
	check "$ARCH: tarball: plist runs /usr/local/bin/boltccd" \
		grep -q '<string>/usr/local/bin/boltccd</string>' \
		"$R/share/boltcc/launchd/org.boltcc.boltccd.plist"
	check "$ARCH: tarball: xcconfig launches /usr/local/bin/boltcc" \
		grep -qx 'C_COMPILER_LAUNCHER = /usr/local/bin/boltcc' \
		"$R/share/boltcc/boltcc.xcconfig"
	check "$ARCH: tarball: install.sh is valid sh for prefix /usr/local" sh -c \
		"sh -n '$top/install.sh' && grep -qx 'PREFIX=/usr/local' '$top/install.sh'"
	check "$ARCH: tarball: install.sh bootstraps the LaunchDaemon, creates _boltccd" sh -c \
		"grep -q install-launchd.sh '$top/install.sh' &&
		 grep -q 'launchctl bootstrap system' '$R/share/boltcc/launchd/install-launchd.sh' &&
		 grep -q 'dscl . -create /Users/_boltccd' '$R/share/boltcc/launchd/install-launchd.sh'"
	check "$ARCH: tarball: install.sh refuses to run on Linux" sh -c \
		"! sh '$top/install.sh' 2>'$X/refuse.err' && grep -q 'for macOS' '$X/refuse.err'"
	check "$ARCH: tarball: files owned by root in the archive" sh -c \
		"! tar -tvzf '$tgz' | awk '{print \$2}' | grep -vq '^root/root$'"
done
exit $FAILED
