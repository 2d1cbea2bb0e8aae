#!/bin/sh
# t_pump_hostile.sh - hostile pump manifests (tests/integration/pumpcases.py)
# sent to a loopback boltccd in distcc protocol 3 and in BOLT pump: names
# with '..', '.', empty components, control bytes, relative, too long or
# too deep; link targets climbing out, not canonical, chained out of the
# tree or into a system-directory link, a system-directory link to a file;
# a file written below a link; duplicates; a file and a directory of the
# same name; too many entries; a bad CDIR.  For each: the job is refused
# (BOLT: EROR with the reason; protocol 3: closed without a reply, as
# distccd does), the daemon's log names the problem, and afterwards the
# daemon still serves good jobs in both protocols.  At the end: nothing
# appeared in the canary directory nor next to the client's sources (every
# case aims inside this test's temp dir), and boltccd --cache-check passes.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc
start_boltccd --io-timeout 5 || die "cannot start boltccd"

B="$T/client"
mkdir -p "$B/src" "$B/canary" || die "mkdir"
printf '#define SECRET 42\n' >"$B/canary/secret.h"
PC="$PYTHON $HERE/pumpcases.py"
# what is there now, to compare with at the end
snap() { (cd "$B" && find . -print | LC_ALL=C sort && cat canary/secret.h); }
snap >"$T/before.txt"

# reason CASE: what the refusal must say (an extended regex)
reason() {
	case $1 in
	name-dotdot*|cdir-dotdot) echo "has a '\.\.' component" ;;
	name-dot) echo "has a '\.' component" ;;
	name-relative) echo "is not absolute" ;;
	name-empty-component|name-trailing-slash) echo "empty component" ;;
	name-root) echo "names the root" ;;
	name-newline|name-escape-byte|link-control-byte) echo "control byte" ;;
	name-nul) echo "NUL byte" ;;
	name-long-component) echo "component of 256 bytes" ;;
	name-too-long) echo "exceeds the limit of 4096" ;;
	name-too-deep) echo "more than 128 components" ;;
	link-rel-escape) echo "climbs out of the job's tree" ;;
	link-abs-dotdot*) echo "absolute target .* has a '\.\.' component" ;;
	link-rel-dotdot-inside|link-chain-escape)
		echo "relative target .* has a '\.\.' component" ;;
	link-sysdir-file) echo "system-directory LINK .* names a file" ;;
	link-into-sysdir) echo "leads into .* a system-directory link" ;;
	link-then-file|sysdir-then-file|link-up-then-file|link-then-dirm)
		echo "is below .* a LINK" ;;
	dup-same|dup-different) echo "named twice \(duplicate file\)" ;;
	dup-link) echo "named twice \(duplicate link\)" ;;
	dup-file-link) echo "named twice, as a file and as a link" ;;
	dirm-then-file|file-then-dirm) echo "named twice, as a (directory|file) and as a" ;;
	file-then-dir) echo "is below .* a file" ;;
	dir-then-file) echo "is a file and a directory" ;;
	too-many) echo "NFIL 20001 exceeds the limit" ;;
	cdir-is-file) echo "CDIR .* is a file in the tree, not a directory" ;;
	*) echo "NO REASON FOR $1" ;;
	esac
}

good() {	# good PROTO LABEL
	out=$($PC run "$1" good "$DPORT" "$B" --timeout 60 2>&1)
	case $out in
	*"answered STAT 0") return 0 ;;
	*) note "$2: $out"; return 1 ;;
	esac
}

check "a good protocol-3 job compiles" good p3 start
check "a good BOLT pump job compiles" good bolt start

$PC list >"$T/cases.txt" || die "pumpcases.py list"
while read -r c protos; do
	[ "$c" = good ] && continue
	want=$(reason "$c")
	for p in p3 bolt; do
		case $protos in *$p*) ;; *) continue ;; esac
		n=$(wc -l <"$DLOG")
		out=$($PC run "$p" "$c" "$DPORT" "$B" --timeout 30 2>&1)
		rc=$?
		sleep 0.1
		line=$(tail -n +"$((n + 1))" "$DLOG" | grep -E "WARN.*$want" | head -n 1)
		if [ $rc -ne 0 ]; then
			fail "$c $p: not refused: $out"
			continue
		fi
		if [ "$p" = bolt ]; then
			check "$c bolt: EROR gives the reason" \
				sh -c "printf '%s\n' \"\$1\" | grep -Eq \"EROR.*\$2\"" _ "$out" "$want"
		else
			check "$c p3: closed without a reply" \
				sh -c "printf '%s\n' \"\$1\" | grep -q 'refused (closed)'" _ "$out"
		fi
		if [ -n "$line" ]; then
			pass "$c $p: logged: $(printf '%s' "$line" | sed 's/.*WARN: //' | cut -c1-140)"
		else
			fail "$c $p: no log line matching /$want/"
			tail -n +"$((n + 1))" "$DLOG" | grep WARN | head -n 2 | sed 's/^/    log: /'
		fi
	done
done <"$T/cases.txt"

check "daemon still alive" alive "$DPID"
check "a good protocol-3 job compiles after the hostile ones" good p3 after
check "a good BOLT pump job compiles after the hostile ones" good bolt after
snap >"$T/after.txt"
check "nothing written in the canary dir nor next to the sources" \
	cmp -s "$T/before.txt" "$T/after.txt"
check "no 'pwned' file anywhere in the test's dir" \
	sh -c "[ -z \"\$(find '$T' -name pwned -print)\" ]"
"$BOLTCCD" --cache-check --cache-dir "$T/cache-$DPORT" >"$T/check.txt" 2>&1
check "boltccd --cache-check: consistent ($(head -c 200 "$T/check.txt"))" \
	grep -q consistent "$T/check.txt"
finish
