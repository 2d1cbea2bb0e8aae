#!/bin/sh
# t_checkouts.sh - one cache for a team: two homes, each with its own
# checkout of an app and its own DerivedData-like folder (a header map
# there pointing into the checkout, a generated header, the objects and
# .d files), built file by file with Xcode-style absolute paths at -g,
# through one boltccd.  With -ffile-prefix-map for the checkout and for
# DerivedData, the second home's build is all cache hits and its .o and .d
# files are byte-identical to its own local build (the .d names its own
# paths, a replayed warning its own file); clang finds a header through
# the map, gcc (no header maps) through -iquote; clang also writes Xcode's
# .dia, identical too; without the maps it gets no hit
# and is still correct.  gcc and clang.  Also: a path no map covers keeps
# the key exact (boltcc --explain says which), and an object that names a
# mapped prefix after all (__FILE__ with debug maps only) is stored for
# its own checkout and never served to the other home.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool gcc clang python3

HMAP="$SPEC/xcode-tools/hmap.py"
[ -f "$HMAP" ] || die "missing $HMAP"

# home H: $T/H/App (checkout), $T/H/Library/DD/App-xyz (DerivedData)
make_home() {
	_h=$T/$1
	_app=$_h/Projects/App
	_dd=$_h/Library/DerivedData/App-$2/Build
	mkdir -p "$_app/Sources/Model" "$_dd/DerivedSources" "$_dd/obj"
	cat >"$_app/Sources/main.c" <<'EOF'
#include <stdio.h>
#include "Model.h"
#include "Generated.h"
static const char here[] = __FILE__;
int main(void)
{
	int unused_local;
	printf("%s %d %d\n", here, model_value(), GENERATED);
	return 0;
}
EOF
	cat >"$_app/Sources/Model/model.c" <<'EOF'
#include "Model.h"
int model_value(void) { return MODEL_BASE + 1; }
EOF
	cat >"$_app/Sources/Model/Model.h" <<'EOF'
#define MODEL_BASE 41
int model_value(void);
EOF
	printf '#define GENERATED 7\n' >"$_dd/DerivedSources/Generated.h"
	python3 "$HMAP" write "$_dd/App-project-headers.hmap" \
		"Model.h=$_app/Sources/Model/Model.h" >/dev/null ||
		die "hmap.py failed"
}
make_home alice 1a2b3c
make_home bob 9f8e7d

start_boltccd || die "boltccd did not start"
HOSTS="127.0.0.1:$DPORT,bolt"

# compile HOME CC TAG WHERE MAPS [extra flags]: both sources of HOME,
# Xcode style, objects, .d and stderr in DerivedData/obj/cur (the same
# paths for every build, as in Xcode), then moved to obj/TAG; WHERE far
# (boltcc) or local; MAPS file (-ffile-prefix-map for the checkout and
# DerivedData), debug (-fdebug-prefix-map only: __FILE__ keeps the path)
# or none
compile() {
	_home=$1; _cc=$2; _tag=$3; _where=$4; _mapk=$5; shift 5
	_app=$T/$_home/Projects/App
	_dd=$(echo "$T/$_home"/Library/DerivedData/App-*/Build)
	rm -rf "$_dd/obj/cur" "$_dd/obj/$_tag"
	mkdir -p "$_dd/obj/cur"
	case $_mapk in
	file) _maps="-ffile-prefix-map=$_app=/src -ffile-prefix-map=$_dd=/dd" ;;
	debug) _maps="-fdebug-prefix-map=$_app=/src -fdebug-prefix-map=$_dd=/dd" ;;
	*) _maps="" ;;
	esac
	for _s in main.c Model/model.c; do
		_o=$_dd/obj/cur/$(basename "$_s" .c).o
		# gcc reads no header maps: the directory itself
		_hm=$_dd/App-project-headers.hmap
		[ "$_cc" = gcc ] && _hm=$_app/Sources/Model
		_cmd="$_cc -g -O1 -Wall $_maps -iquote $_hm"
		_cmd="$_cmd -I$_dd/DerivedSources $* -MMD -MT $_o -MF ${_o%.o}.d"
		# clang: Xcode's serialized diagnostics too (pump mode)
		[ "$_cc" = clang ] &&
			_cmd="$_cmd --serialize-diagnostics ${_o%.o}.dia"
		_cmd="$_cmd -c $_app/Sources/$_s -o $_o"
		if [ "$_where" = local ]; then
			# shellcheck disable=SC2086
			(cd "$_app" && $_cmd) 2>"${_o%.o}.err" || return 1
		else
			# shellcheck disable=SC2086
			(cd "$_app" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$HOSTS" \
				DISTCC_FALLBACK=0 "$BOLTCC" $_cmd) \
				2>"${_o%.o}.err" || return 1
		fi
	done
	mv "$_dd/obj/cur" "$_dd/obj/$_tag"
}

# same_outputs HOME TAG1 TAG2: .o, .d and stderr files identical
same_outputs() {
	_dd=$(echo "$T/$1"/Library/DerivedData/App-*/Build)
	_dias=""
	[ -f "$_dd/obj/$2/main.dia" ] && _dias="main.dia model.dia"
	for _f in main.o main.d main.err model.o model.d $_dias; do
		cmp -s "$_dd/obj/$2/$_f" "$_dd/obj/$3/$_f" || {
			echo "differs: $_f"
			return 1
		}
	done
}

hits() { client_stat "$CDIR" cache_hits; }
# other: the farm's count of hits on entries another directory stored
CT="$PYTHON $BOLTCC_SRCDIR/tests/integration/cachetool.py"
# (a worker counts a hit just after its reply: wait up to 3 s for N)
other() { $CT cstat "$DSPORT" hits_other_checkout 2>/dev/null || echo -1; }
other_is() {
	for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		[ "$(other)" = "$1" ] && return 0
		sleep 0.2
	done
	return 1
}
for cc in gcc clang; do
	CDIR=$(new_client_dir)
	o0=$(other)
	compile alice $cc $cc-far far file || die "alice $cc through the farm"
	check "$cc: alice's build was compiled (no hit yet)" test "$(hits)" = 0
	compile bob $cc $cc-local local file || die "bob $cc local"
	compile bob $cc $cc-far far file || die "bob $cc through the farm"
	check "$cc maps: bob's build is all hits ($(hits) of 2)" \
		test "$(hits)" = 2
	check "$cc maps: bob's client counts 2 hits from another checkout" \
		test "$(client_stat "$CDIR" cache_hits_other_checkout)" = 2
	check "$cc maps: the farm counts 2 more hits from another checkout" \
		other_is $((o0 + 2))
	check "$cc maps: bob's .o, .d and warnings identical to his local build" \
		same_outputs bob $cc-local $cc-far
	ddb=$(echo "$T"/bob/Library/DerivedData/App-*/Build)
	check "$cc maps: bob's .d names bob's files" \
		grep -q "$T/bob/Projects/App/Sources/Model/Model.h" \
		"$ddb/obj/$cc-far/main.d"
	check "$cc maps: the replayed warning names bob's file" \
		grep -q "$T/bob/Projects/App/Sources/main.c" \
		"$ddb/obj/$cc-far/main.err"
	[ $cc = clang ] &&
		check "clang maps: bob's .dia (identical to his local one) names his file" \
			grep -q "$T/bob/Projects/App/Sources/main.c" \
			"$ddb/obj/$cc-far/main.dia"
	check "$cc maps: no alice path in bob's outputs" \
		sh -c "! grep -rq alice '$ddb/obj/$cc-far'"

	# without maps: other paths, other keys; still right
	compile alice $cc $cc-nm-far far none || die "alice $cc nomaps"
	compile bob $cc $cc-nm-local local none || die "bob $cc local nomaps"
	compile bob $cc $cc-nm-far far none || die "bob $cc nomaps"
	check "$cc no maps: no hit across homes ($(hits) hits)" \
		test "$(hits)" = 2
	check "$cc no maps: bob's outputs identical to his local build" \
		same_outputs bob $cc-nm-local $cc-nm-far

	# debug maps only: main.c's __FILE__ still names the checkout, so
	# its object is kept for alice's checkout; model.c is shared
	compile alice $cc $cc-dm-far far debug || die "alice $cc debug maps"
	compile bob $cc $cc-dm-local local debug || die "bob $cc local dmaps"
	compile bob $cc $cc-dm-far far debug || die "bob $cc debug maps"
	check "$cc debug maps: only model.c is a hit across homes ($(hits))" \
		test "$(hits)" = 3
	check "$cc debug maps: bob's outputs identical to his local build" \
		same_outputs bob $cc-dm-local $cc-dm-far
	compile alice $cc $cc-dm-again far debug || die "alice $cc again"
	check "$cc debug maps: alice's own rebuild hits both ($(hits))" \
		test "$(hits)" = 5
	check "$cc: from another checkout: bob's 2 + model.c once ($(other))" \
		other_is $((o0 + 3))
	check "$cc: the client counts the same 3 ($(client_stat "$CDIR" cache_hits_other_checkout))" \
		test "$(client_stat "$CDIR" cache_hits_other_checkout)" = 3
done

# two daemons: the job goes through the key's owner (LOCATE) and the host
# that has it (LOOKUPF); those answers name who stored the entry too
P1=$DPORT
start_boltccd || die "second boltccd"
HOSTS="127.0.0.1:$P1,bolt 127.0.0.1:$DPORT,bolt"
CDIR=$(new_client_dir)
compile alice clang clang-2h-far far file -DTWO_HOSTS ||
	die "alice, two hosts"
check "two hosts: alice's build was compiled" test "$(hits)" = 0
compile bob clang clang-2h-local local file -DTWO_HOSTS || die "bob local"
compile bob clang clang-2h-far far file -DTWO_HOSTS || die "bob, two hosts"
check "two hosts: bob's build is all hits ($(hits) of 2)" test "$(hits)" = 2
check "two hosts: bob's client counts 2 hits from another checkout" \
	test "$(client_stat "$CDIR" cache_hits_other_checkout)" = 2
check "two hosts: bob's .o, .d, .dia and warnings identical to his local build" \
	same_outputs bob clang-2h-local clang-2h-far
compile alice clang clang-2h-again far file -DTWO_HOSTS || die "alice again"
check "two hosts: alice's rebuild: hits on her own entries ($(hits), $(client_stat "$CDIR" cache_hits_other_checkout) from another checkout)" \
	sh -c "test $(hits) = 4 &&
	    test $(client_stat "$CDIR" cache_hits_other_checkout) = 2"

# --explain: which path keeps the key exact
app=$T/bob/Projects/App
(cd "$app" && "$BOLTCC" --explain clang -g -ffile-prefix-map="$app"=/src \
	-I/opt/elsewhere/include -c "$app/Sources/main.c" -o x.o) >"$T/ex.json"
check "--explain: an unmapped -I keeps the key exact" \
	grep -q '"key_paths": *"exact"' "$T/ex.json"
check "--explain names the first unmapped path" \
	grep -q '/opt/elsewhere/include' "$T/ex.json"
(cd "$app" && "$BOLTCC" --explain clang -g -ffile-prefix-map="$app"=/src \
	-c "$app/Sources/main.c" -o "$app/x.o") >"$T/ex2.json"
check "--explain: every path mapped: key_paths mapped" \
	grep -q '"key_paths": *"mapped"' "$T/ex2.json"

check "daemon still alive" alive "$DPID"
finish
