# tests/deps.sh - build and test dependencies of boltcc (sourced, POSIX sh).
#
#   bc_missing_deps        print the Debian packages that are missing
#   bc_ensure_deps         install them (root + apt-get) or fail naming them
#
# Used by setup.sh, tests/run.sh and .ci/run so the list lives in one place.

BC_DEB_PACKAGES="autoconf automake make pkg-config gcc clang python3 \
libzstd-dev liblzo2-dev libssh2-1-dev libsqlite3-dev libssl-dev check distcc \
libxml2-utils openssh-client openssh-server iproute2 nftables \
llvm-14 file tcl perl xz-utils ruby tmux chromium"
# The macOS cross build also needs npm (for the Zig toolchain).  It is not
# in the list above: where Node.js came from elsewhere (NodeSource) it
# already has npm, and Debian's npm package would conflict; so it is
# installed only when the command is missing (bc_missing_deps).

bc_missing_deps() {
	_m=""
	command -v autoreconf >/dev/null 2>&1 || _m="$_m autoconf"
	command -v automake >/dev/null 2>&1 || _m="$_m automake"
	command -v make >/dev/null 2>&1 || _m="$_m make"
	command -v gcc >/dev/null 2>&1 || _m="$_m gcc"
	command -v clang >/dev/null 2>&1 || _m="$_m clang"
	command -v python3 >/dev/null 2>&1 || _m="$_m python3"
	command -v xmllint >/dev/null 2>&1 || _m="$_m libxml2-utils"
	if command -v distcc >/dev/null 2>&1 && command -v distccd >/dev/null 2>&1; then
		:
	else
		_m="$_m distcc"
	fi
	# tests/cluster (Linux only): ip and tc (namespaces, tbf), nft (drop)
	if [ "$(uname -s)" = Linux ]; then
		command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] ||
			[ -x /sbin/ip ] || _m="$_m iproute2"
		command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] ||
			_m="$_m nftables"
	fi
	# the macOS cross build (contrib/macos/cross-build.sh, tests/macos)
	command -v npm >/dev/null 2>&1 || _m="$_m npm"
	command -v llvm-objdump-14 >/dev/null 2>&1 &&
		command -v llvm-nm-14 >/dev/null 2>&1 || _m="$_m llvm-14"
	command -v file >/dev/null 2>&1 || _m="$_m file"
	command -v tclsh >/dev/null 2>&1 || _m="$_m tcl"
	command -v perl >/dev/null 2>&1 || _m="$_m perl"
	command -v xz >/dev/null 2>&1 || _m="$_m xz-utils"
	# contrib/macos/boltcc.rb is checked with ruby -c
	command -v ruby >/dev/null 2>&1 || _m="$_m ruby"
	# tests/integration/t_monitor.sh: the terminal view under tmux, the
	# web page in headless Chromium
	command -v tmux >/dev/null 2>&1 || _m="$_m tmux"
	command -v chromium >/dev/null 2>&1 || _m="$_m chromium"
	# tests/integration/t_ssh.sh: ssh-keygen, ssh and sshd
	command -v ssh-keygen >/dev/null 2>&1 || _m="$_m openssh-client"
	[ -x /usr/sbin/sshd ] || _m="$_m openssh-server"
	if command -v pkg-config >/dev/null 2>&1; then
		pkg-config --exists libzstd || _m="$_m libzstd-dev"
		pkg-config --exists lzo2 || _m="$_m liblzo2-dev"
		pkg-config --exists libssh2 || _m="$_m libssh2-1-dev"
		pkg-config --exists sqlite3 || _m="$_m libsqlite3-dev"
		pkg-config --exists libcrypto || _m="$_m libssl-dev"
		pkg-config --exists check || _m="$_m check"
	else
		_m="$_m pkg-config libzstd-dev liblzo2-dev libssh2-1-dev libsqlite3-dev libssl-dev check"
	fi
	echo $_m
}

# bc_apt_install PKG...: apt-get update + install, non-interactive.
bc_apt_install() {
	echo "deps: apt-get update && apt-get install -y $*"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "$@" >/dev/null || return 1
}

bc_ensure_deps() {
	_missing=$(bc_missing_deps)
	[ -z "$_missing" ] && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		bc_apt_install $_missing || {
			echo "deps: installing failed: $_missing" >&2
			return 1
		}
		_missing=$(bc_missing_deps)
		[ -z "$_missing" ] && return 0
		echo "deps: still missing after install: $_missing" >&2
		return 1
	fi
	echo "deps: missing: $_missing" >&2
	if command -v apt-get >/dev/null 2>&1; then
		echo "deps: run as root, or: sudo apt-get install $_missing" >&2
	else
		echo "deps: on macOS: brew install autoconf automake pkg-config zstd lzo libssh2 sqlite check distcc python" >&2
	fi
	return 1
}
