#!/bin/sh
# t_contrib.sh - the service files of contrib/ are well-formed and carry
# what their managers need:
#  * contrib/xcode/org.boltcc.boltccd.plist: well-formed XML (xmllint,
#    plutil on macOS), a property list whose keys launchd requires or the
#    worker needs (Label, ProgramArguments running boltccd in the
#    foreground, KeepAlive, RunAtLoad, SoftResourceLimits NumberOfFiles,
#    log paths, DEVELOPER_DIR, the Listeners/Stats sockets boltccd asks
#    launchd for), and every ProgramArguments option known to boltccd;
#  * contrib/xcode/boltcc.xcconfig: xcconfig syntax, the launcher and the
#    settings the README promises;
#  * contrib/xcode/install-launchd.sh: sh -n, launchctl bootstrap system;
#  * contrib/systemd units: systemd-analyze verify (where installed), and
#    the socket names boltccd understands.
. "$(dirname "$0")/lib.sh"
need_binaries
C="$BOLTCC_SRCDIR/contrib"
PLIST="$C/xcode/org.boltcc.boltccd.plist"
XCC="$C/xcode/boltcc.xcconfig"

if command -v xmllint >/dev/null 2>&1; then
	check "plist: well-formed XML (xmllint)" xmllint --noout "$PLIST"
else
	note "xmllint not installed (package libxml2-utils): XML check skipped"
fi
if command -v plutil >/dev/null 2>&1; then
	check "plist: plutil -lint" plutil -lint "$PLIST"
fi
check "plist: launchd keys" $PYTHON - "$PLIST" "$BOLTCCD" <<'X'
import plistlib, subprocess, sys
p = plistlib.load(open(sys.argv[1], "rb"))
def need(cond, what):
    if not cond:
        print("plist: " + what); sys.exit(1)
need(isinstance(p.get("Label"), str) and p["Label"], "Label")
args = p.get("ProgramArguments")
need(isinstance(args, list) and args and args[0].endswith("/boltccd"),
     "ProgramArguments runs boltccd")
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

check "install-launchd.sh: sh -n" sh -n "$C/xcode/install-launchd.sh"
check "install-launchd.sh: launchctl bootstrap system" \
	grep -q 'launchctl bootstrap system' "$C/xcode/install-launchd.sh"
check "README: Thunderbolt setup and --stats" sh -c \
	"grep -q Thunderbolt '$C/xcode/README.md' && grep -q 'boltcc --stats' '$C/xcode/README.md'"

# systemd units
check "systemd: socket names are jobs and stats" sh -c \
	"grep -q '^FileDescriptorName=jobs' '$C/systemd/boltccd.socket' && \
	 grep -q '^FileDescriptorName=stats' '$C/systemd/boltccd-stats.socket'"
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/units"
	for f in boltccd.service boltccd.socket boltccd-stats.socket; do
		sed "s|/usr/local/bin/boltccd|$BOLTCCD|" "$C/systemd/$f" \
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
finish
