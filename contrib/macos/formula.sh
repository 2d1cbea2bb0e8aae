#!/bin/sh
# formula.sh - the Homebrew formula for a release tarball.
#
#   contrib/macos/formula.sh [-w] [-u URL] DIST_TARBALL [FORMULA]
#
# DIST_TARBALL is boltcc-VERSION.tar.gz from `make dist`.  The formula's
# url becomes https://github.com/boltcc/boltcc/releases/download/vVERSION/
# boltcc-VERSION.tar.gz (or URL, e.g. file:///Users/me/boltcc-0.1.0.tar.gz
# to try a tarball on a Mac before it is released) and its sha256 that of
# DIST_TARBALL, so upload this very file: a second `make dist` makes other
# bytes (file times).  The formula goes to stdout, or with -w back into
# FORMULA (default: boltcc.rb next to this script).
#
# Refused: a name other than boltcc-VERSION.tar.gz, and a tarball without
# boltcc-VERSION/configure (GitHub's "Source code" archives), which the
# formula could not build.
set -eu

die() { echo "formula.sh: $*" >&2; exit 1; }
usage() { echo "usage: $0 [-w] [-u URL] DIST_TARBALL [FORMULA]" >&2; exit 2; }

write=0
url=
while [ $# -gt 0 ]; do
	case $1 in
	-w|--write) write=1; shift ;;
	-u|--url) [ $# -ge 2 ] || usage; url=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
case $url in
''|https://*|file:///*) ;;
*) die "-u: want an https:// or file:/// URL, not '$url'" ;;
esac
case $url in
*'"'*|*'\'*|*'#{'*|*' '*) die "-u: no quotes, backslashes, spaces or #{ in the URL" ;;
esac
[ $# -ge 1 ] && [ $# -le 2 ] || usage
tarball=$1
formula=${2:-$(dirname "$0")/boltcc.rb}
[ -f "$tarball" ] || die "no such file: $tarball"
[ -f "$formula" ] || die "no such file: $formula"

name=$(basename "$tarball")
case $name in
boltcc-?*.tar.gz) ;;
*) die "$name: expected boltcc-VERSION.tar.gz (the tarball of make dist)" ;;
esac
version=${name#boltcc-}
version=${version%.tar.gz}
case $version in
*[!0-9A-Za-z._-]*) die "$name: odd characters in version '$version'" ;;
esac
tar -tzf "$tarball" >/dev/null 2>&1 || die "$name: not a gzip tar archive"
tar -tzf "$tarball" 2>/dev/null | grep -qx "boltcc-$version/configure" ||
	die "$name has no boltcc-$version/configure: not a make dist tarball"

if command -v sha256sum >/dev/null 2>&1; then
	sum=$(sha256sum <"$tarball" | cut -d' ' -f1)
elif command -v shasum >/dev/null 2>&1; then
	sum=$(shasum -a 256 <"$tarball" | cut -d' ' -f1)
elif command -v openssl >/dev/null 2>&1; then
	sum=$(openssl dgst -sha256 <"$tarball" | sed 's/^.*= *//')
else
	die "need sha256sum, shasum or openssl"
fi
case $sum in
*[!0-9a-f]*|'') die "bad sha256 '$sum'" ;;
esac
[ ${#sum} -eq 64 ] || die "bad sha256 '$sum'"
: "${url:=https://github.com/boltcc/boltcc/releases/download/v$version/boltcc-$version.tar.gz}"

tmp=$(mktemp "${TMPDIR:-/tmp}/boltcc-formula.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# The release url and sha256 are the class's own (two-space) lines; the
# head url is indented further.  The placeholder's comment goes.
awk -v url="$url" -v sum="$sum" '
/^  # placeholder: / { next }
/^  url "[^"]*"$/ {
	print "  url \"" url "\""; nu++; next
}
/^  sha256 "[0-9a-f]*"$/ { print "  sha256 \"" sum "\""; ns++; next }
{ print }
END { if (nu != 1 || ns != 1) exit 3 }
' "$formula" >"$tmp" ||
	die "$formula: want exactly one top-level url line and one sha256 line"
if command -v ruby >/dev/null 2>&1; then
	ruby -c "$tmp" >/dev/null || die "the rewritten formula does not parse"
fi

if [ $write = 1 ]; then
	cat "$tmp" >"$formula"
	echo "formula.sh: $formula: $version, sha256 $sum" >&2
else
	cat "$tmp"
fi
