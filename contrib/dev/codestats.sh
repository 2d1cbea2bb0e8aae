#!/bin/sh
# Size figures of the non-test C sources, for before/after comparisons of
# a refactoring (doc/ARCHITECTURE.md, "Measuring the code"):
#   functions, how many are over 80 and over 150 lines, the ten longest,
#   the ten largest files, and the repeated-code pairs `duplicates` finds
#   (when it is installed).
#   sh contrib/dev/codestats.sh [REPO_DIR]
# Needs Universal Ctags (Debian: universal-ctags).
set -eu
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo"
srcs=$(ls client/*.c daemon/*.c cache/*.c preproc/*.c common/*.c 2>/dev/null)
# ctags gives each function's first and last line (end: field).
tab=$(ctags -x --_xformat='%N %n %{end} %F' --kinds-C=f --fields=+ne \
	-o - $srcs 2>/dev/null | awk '{ print $3 - $2 + 1, $1, $4 ":" $2 }' |
	sort -rn)
total=$(printf '%s\n' "$tab" | grep -c . || true)
over80=$(printf '%s\n' "$tab" | awk '$1 > 80' | grep -c . || true)
over150=$(printf '%s\n' "$tab" | awk '$1 > 150' | grep -c . || true)
echo "functions: $total, over 80 lines: $over80, over 150 lines: $over150"
echo "ten longest (lines name file:line):"
printf '%s\n' "$tab" | head -n 10 | sed 's/^/  /'
echo "ten largest files (lines):"
wc -l $srcs | grep -v ' total$' | sort -rn | head -n 10 | sed 's/^/  /'
if command -v duplicates >/dev/null 2>&1; then
	echo "repeated code in non-test sources (duplicates, 6+ lines):"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/src"
	for d in client daemon cache preproc common; do
		cp -r "$d" "$tmp/src/"
	done
	(cd "$tmp/src" && duplicates --most 200 --seconds 120) |
		sed 's/^/  /'
fi
