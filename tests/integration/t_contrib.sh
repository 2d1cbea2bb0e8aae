#!/bin/sh
# t_contrib.sh - the service files of contrib/, as `make install` puts
# them, are well-formed and carry what their managers need:
#  * make install (DESTDIR) writes them under $(pkgdatadir) with this
#    build's paths: no @...@ marker left, every path names the installed
#    boltcc/boltccd;
#  * launchd/org.boltcc.boltccd.plist: well-formed XML (xmllint, plutil on
#    macOS), a property list whose keys launchd requires or the worker
#    needs (Label, ProgramArguments running boltccd in the foreground,
#    KeepAlive, RunAtLoad, SoftResourceLimits NumberOfFiles, log paths,
#    DEVELOPER_DIR, the Listeners/Stats sockets boltccd asks launchd for),
#    and every ProgramArguments option known to boltccd;
#  * boltcc.xcconfig: xcconfig syntax, the launcher and the settings the
#    README promises;
#  * launchd/install-launchd.sh: sh -n, launchctl bootstrap system;
#  * systemd units: systemd-analyze verify (where installed), and the
#    socket names boltccd understands;
#  * the man pages: groff renders them without warnings and with the
#    spaces of their alternating-font lines.
. "$(dirname "$0")/lib.sh"
need_binaries
C="$BOLTCC_SRCDIR/contrib"
ROOT="$T/root"

# make install into a scratch root (not from within make's jobserver)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$BOLTCC_BUILDDIR" \
	install DESTDIR="$ROOT" >"$T/install.log" 2>&1
check "make install DESTDIR: exit 0" test $? = 0 || sed 's/^/    /' "$T/install.log"
inst=$(cd "$ROOT" && find . -path '*/bin/boltccd' | sed 's|^\.||')
BINDIR=${inst%/boltccd}
PKGDATA=$(cd "$ROOT" && find . -type d -path '*/share/boltcc' | sed 's|^\.||')
check "installed: bin/boltcc, bin/boltccd, libexec/boltcc/boltcc-ssh" sh -c \
	"test -x '$ROOT$BINDIR/boltcc' && test -x '$ROOT$BINDIR/boltccd' && \
	 test -n '$BINDIR' && find '$ROOT' -path '*/libexec/boltcc/boltcc-ssh' | grep -q ."
for f in boltcc.xcconfig launchd/org.boltcc.boltccd.plist \
    launchd/install-launchd.sh systemd/boltccd.service \
    systemd/boltccd.socket systemd/boltccd-stats.socket; do
	check "installed: \$(pkgdatadir)/$f" test -f "$ROOT$PKGDATA/$f"
done
check "installed: install-launchd.sh is executable" \
	test -x "$ROOT$PKGDATA/launchd/install-launchd.sh"
check "installed: no @...@ marker left" sh -c \
	"! grep -rn '@[a-z]*dir@' '$ROOT$PKGDATA'"
check "installed: the xcconfig launches this install's boltcc" \
	grep -qx "C_COMPILER_LAUNCHER = $BINDIR/boltcc" "$ROOT$PKGDATA/boltcc.xcconfig"
check "installed: the systemd unit runs this install's boltccd" \
	grep -q "^ExecStart=$BINDIR/boltccd " "$ROOT$PKGDATA/systemd/boltccd.service"
check "installed: install-launchd.sh checks this install's boltccd" \
	grep -qx "BOLTCCD=$BINDIR/boltccd" "$ROOT$PKGDATA/launchd/install-launchd.sh"
PLIST="$ROOT$PKGDATA/launchd/org.boltcc.boltccd.plist"
XCC="$ROOT$PKGDATA/boltcc.xcconfig"
LAUNCHD_SH="$ROOT$PKGDATA/launchd/install-launchd.sh"
UNITS="$ROOT$PKGDATA/systemd"

if command -v xmllint >/dev/null 2>&1; then
	check "plist: well-formed XML (xmllint)" xmllint --noout "$PLIST"
else
	note "xmllint not installed (package libxml2-utils): XML check skipped"
fi
if command -v plutil >/dev/null 2>&1; then
	check "plist: plutil -lint" plutil -lint "$PLIST"
fi
check "plist: launchd keys" $PYTHON - "$PLIST" "$BOLTCCD" "$BINDIR" <<'X'
import plistlib, subprocess, sys
p = plistlib.load(open(sys.argv[1], "rb"))
def need(cond, what):
    if not cond:
        print("plist: " + what); sys.exit(1)
need(isinstance(p.get("Label"), str) and p["Label"], "Label")
args = p.get("ProgramArguments")
need(isinstance(args, list) and args and
     args[0] == sys.argv[3] + "/boltccd",
     "ProgramArguments runs this install's boltccd (%s)" % sys.argv[3])
need("--no-detach" in args and "--daemon" not in args, "foreground")
need(p.get("KeepAlive") not in (None, False), "KeepAlive")
need(p.get("RunAtLoad") is True, "RunAtLoad")
for lim in ("SoftResourceLimits", "HardResourceLimits"):
    need(p.get(lim, {}).get("NumberOfFiles", 0) >= 4096, lim + " NumberOfFiles")
need(p.get("StandardErrorPath") and p.get("StandardOutPath"), "log paths")
need(p.get("EnvironmentVariables", {}).get("DEVELOPER_DIR", "").endswith(
     "/Contents/Developer"), "DEVELOPER_DIR")
socks = p.get("Sockets", {})
need(socks.get("Listeners", {}).get("SockServiceName") == "3632", "Listeners 3632")
need(socks.get("Stats", {}).get("SockServiceName") == "3633", "Stats 3633")
need(p.get("UserName") and p.get("UserName") != "root", "UserName")
# every option is one boltccd knows
help_text = subprocess.run([sys.argv[2], "--help"], capture_output=True,
                           text=True).stdout
for a in args[1:]:
    if a.startswith("--"):
        need(a.split("=")[0] in help_text, "unknown boltccd option " + a)
X
# the launchd socket group names are the ones activate.c asks for
check "plist: socket groups match daemon/activate.c" sh -c \
	"grep -q '\"Listeners\", \"Stats\"' '$BOLTCC_SRCDIR/daemon/activate.c'"

check "xcconfig: syntax" $PYTHON - "$XCC" <<'X'
import re, sys
ok = re.compile(r'^\s*(//.*)?$|^\s*#include\??\s+"[^"]+"\s*$|'
                r'^\s*[A-Z_][A-Z0-9_]*(\[[^]]+\])*\s*=\s*[^;]*?\s*(//.*)?$')
keys = {}
for n, line in enumerate(open(sys.argv[1]), 1):
    line = line.rstrip("\n")
    if not ok.match(line):
        print("xcconfig line %d: %r" % (n, line)); sys.exit(1)
    m = re.match(r'^\s*([A-Z_][A-Z0-9_]*)\s*=\s*(.*?)\s*(//.*)?$', line)
    if m:
        keys[m.group(1)] = m.group(2)
want = {"C_COMPILER_LAUNCHER": None, "CLANG_USE_RESPONSE_FILE": "NO",
        "COMPILER_INDEX_STORE_ENABLE": "NO", "CLANG_ENABLE_MODULES": "NO",
        "CLANG_ENABLE_EXPLICIT_MODULES": "NO"}
for k, v in want.items():
    if k not in keys or (v is not None and keys[k] != v):
        print("xcconfig: %s = %s, want %s" % (k, keys.get(k), v)); sys.exit(1)
if not keys["C_COMPILER_LAUNCHER"].endswith("/boltcc"):
    print("xcconfig: launcher is not boltcc"); sys.exit(1)
X

check "install-launchd.sh: sh -n" sh -n "$LAUNCHD_SH"
check "install-launchd.sh: launchctl bootstrap system" \
	grep -q 'launchctl bootstrap system' "$LAUNCHD_SH"
check "install-launchd.sh: boltccd --self-test before launchctl bootstrap" sh -c \
	"s=\$(grep -n -- '--self-test' '$LAUNCHD_SH' | head -n 1 | cut -d: -f1);
	 b=\$(grep -n 'launchctl bootstrap system' '$LAUNCHD_SH' | tail -n 1 | cut -d: -f1);
	 [ -n \"\$s\" ] && [ -n \"\$b\" ] && [ \"\$s\" -lt \"\$b\" ]"
check "README: Thunderbolt setup and --stats" sh -c \
	"grep -q Thunderbolt '$C/xcode/README.md' && grep -q 'boltcc --stats' '$C/xcode/README.md'"

# systemd units
check "systemd: socket names are jobs and stats" sh -c \
	"grep -q '^FileDescriptorName=jobs' '$UNITS/boltccd.socket' && \
	 grep -q '^FileDescriptorName=stats' '$UNITS/boltccd-stats.socket'"
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/units"
	for f in boltccd.service boltccd.socket boltccd-stats.socket; do
		sed "s|$BINDIR/boltccd|$ROOT$BINDIR/boltccd|" "$UNITS/$f" \
			>"$T/units/$f"
	done
	(cd "$T/units" && systemd-analyze verify --man=no ./boltccd.socket \
		./boltccd-stats.socket ./boltccd.service) >"$T/verify.out" 2>&1
	rc=$?
	check "systemd-analyze verify: exit 0" test $rc = 0
	check "systemd-analyze verify: no unknown keys" sh -c \
		"! grep -qi 'unknown' '$T/verify.out'"
	[ $rc = 0 ] || sed 's/^/    /' "$T/verify.out"
else
	note "systemd-analyze not installed: unit check skipped"
fi

# man pages: groff renders them without a warning (-ww: all of them; a
# control character or an unknown escape is one), and the alternating
# font macros keep their spaces.  -rLL/-rHY: one long line per
# paragraph, no hyphenation, so a sentence can be looked for whole.
if command -v groff >/dev/null 2>&1; then
	M="$BOLTCC_SRCDIR/man"
	for p in boltcc.1 boltccd.8; do
		for dev in utf8 ascii; do
			groff -man -T$dev -ww -z "$M/$p" >"$T/groff.out" 2>&1
			check "man/$p: groff -T$dev -ww: no warning" \
				test ! -s "$T/groff.out"
			sed 's/^/    /' "$T/groff.out" | head -n 5
		done
		groff -man -Tascii -P-cbu -rLL=250n -rHY=0 "$M/$p" 2>/dev/null |
			tr -s ' \n' '  ' >"$T/$p.txt"
	done
	for want in "plain mode (local preprocessor) instead of pump mode; contradicts ,cpp." \
	    "Without ,bolt or ,distcc, boltcc asks the host once (a short \"hello\"" \
	    "clang's profile use (-fprofile-instr-use=FILE) goes out" \
	    "An unknown option starting with --"; do
		check "man/boltcc.1 renders: '$want'" grep -qF -- "$want" "$T/boltcc.1.txt"
	done
	for want in "(inetd, or ssh host boltccd --inetd) and exit." \
	    "boltccd[4711] WARN: message"; do
		check "man/boltccd.8 renders: '$want'" grep -qF -- "$want" "$T/boltccd.8.txt"
	done
else
	note "groff not installed: man page check skipped"
fi
finish
