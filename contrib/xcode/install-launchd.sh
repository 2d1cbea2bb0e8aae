#!/bin/sh
# install-launchd.sh - install boltccd as a LaunchDaemon on this Mac.
#
#   sudo ./install-launchd.sh [PLIST]
#
# Creates the _boltccd user and /var/db/boltccd, installs the plist owned
# by root (launchd refuses group/world-writable plists), checks it with
# plutil, and (re)loads it with the modern launchctl verbs.
set -eu

LABEL=org.boltcc.boltccd
SRC=${1:-$(dirname "$0")/$LABEL.plist}
DST=/Library/LaunchDaemons/$LABEL.plist
DB=/var/db/boltccd

[ "$(id -u)" = 0 ] || { echo "run as root (sudo $0)" >&2; exit 1; }
[ "$(uname -s)" = Darwin ] || { echo "this script is for macOS" >&2; exit 1; }
[ -x /usr/local/bin/boltccd ] || {
	echo "install boltccd first (make install)" >&2; exit 1; }
plutil -lint "$SRC"

if ! id _boltccd >/dev/null 2>&1; then
	# A hidden system user, uid/gid in the system range.
	uid=$(dscl . -list /Users UniqueID | awk '$2 >= 300 && $2 < 400 {print $2}' |
		sort -n | tail -n 1)
	uid=$(( ${uid:-299} + 1 ))
	dscl . -create /Groups/_boltccd PrimaryGroupID "$uid"
	dscl . -create /Users/_boltccd UniqueID "$uid"
	dscl . -create /Users/_boltccd PrimaryGroupID "$uid"
	dscl . -create /Users/_boltccd UserShell /usr/bin/false
	dscl . -create /Users/_boltccd NFSHomeDirectory "$DB"
	dscl . -create /Users/_boltccd IsHidden 1
	echo "created user _boltccd (uid $uid)"
fi
install -d -o _boltccd -g _boltccd -m 750 "$DB" "$DB/tmp" "$DB/cache"
touch /var/log/boltccd.log
chown _boltccd:_boltccd /var/log/boltccd.log

# The workers need an accepted Xcode licence, or every clang run fails.
if ! xcrun clang --version >/dev/null 2>&1; then
	echo "warning: 'xcrun clang' fails; accept the licence with" \
		"'sudo xcodebuild -license accept'" >&2
fi

# bootout first: bootstrap fails with "5: Input/output error" when the
# label is already loaded.
launchctl bootout system/$LABEL 2>/dev/null || true
install -o root -g wheel -m 644 "$SRC" "$DST"
launchctl enable system/$LABEL
launchctl bootstrap system "$DST"
sleep 1
launchctl print system/$LABEL | sed -n '1,25p'
echo "boltccd installed; check it with: curl -s http://127.0.0.1:3633/stats.json"
