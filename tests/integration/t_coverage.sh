#!/bin/sh
# t_coverage.sh - coverage builds and the farm:
#  * clang source-based coverage (-fprofile-instr-generate
#    -fcoverage-mapping, what Xcode's "Gather coverage" adds) goes to a
#    boltccd in BOLT pump mode, and the object is byte-identical to the
#    local compile: relative and absolute paths, -I inside and outside the
#    working directory, -g, -MD with the .d beside an object in a
#    subdirectory; a second build of the same file is a cache hit with
#    the same bytes;
#  * the program linked from the farm's objects runs, and llvm-cov reports
#    its coverage under the client's own file names;
#  * where pump mode toward a boltccd is not possible (",plain", a stock
#    distccd's protocol 3 pump, a preprocessed input) the job compiles
#    locally, reason "coverage", also with DISTCC_FALLBACK=0, and nothing
#    reaches the daemon;
#  * clang's profile use (-fprofile-instr-use=FILE) goes out in pump mode
#    with the profile shipped, identical to local, keyed by its contents;
#  * gcc's --coverage stays local.
. "$(dirname "$0")/lib.sh"
need_binaries
need_tool clang

P=$T/proj
mkdir -p "$P/src/inc" "$P/src/obj" "$P/absinc"
cat >"$P/src/main.c" <<'EOF'
#include <stdio.h>
#include "util.h"
#include <abs.h>
int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		printf("%d\n", twice(argc) + ABS);
	else
		printf("%d\n", twice(1));
	return 0;
}
EOF
cat >"$P/src/util.c" <<'EOF'
#include "util.h"
#define TWICE(x) ((x) * 2)
int twice(int x)
{
	if (x > 100)
		return 0;
	return TWICE(x);
}
EOF
printf 'int twice(int x);\n' >"$P/src/inc/util.h"
printf '#define ABS 7\n' >"$P/absinc/abs.h"

start_boltccd || die "boltccd did not start"
CDIR=$(new_client_dir)
COV="-fprofile-instr-generate -fcoverage-mapping"

# counter NAME: a client counter of $CDIR
counter() { client_stat "$CDIR" "$1"; }
# farm HOSTS ARGS...: boltcc with these hosts, in $P/src
farm() {
	_h=$1
	shift
	(cd "$P/src" && BOLTCC_DIR="$CDIR" BOLTCC_HOSTS="$_h" \
		DISTCC_FALLBACK=0 "$BOLTCC" "$@")
}
BOLT="127.0.0.1:$DPORT,bolt"

# remote_case LABEL OUT LOCALOUT ARGS...: through the farm in pump mode
# and locally; identical objects, one more pump job
remote_case() {
	_label=$1; _out=$2; _lout=$3; shift 3
	_pump=$(counter jobs_pump)
	_ok=$(counter jobs_remote_ok)
	farm "$BOLT" clang "$@" -o "$_out" 2>"$T/err.txt"
	check "$_label: boltcc exit 0" test $? = 0 || sed 's/^/    /' "$T/err.txt"
	(cd "$P/src" && clang "$@" -o "$_lout") || die "$_label: local clang"
	check "$_label: went out in pump mode" test "$(counter jobs_pump)" = $((_pump + 1))
	check "$_label: compiled on the farm" test "$(counter jobs_remote_ok)" = $((_ok + 1))
	case $_out in /*) ;; *) _out=$P/src/$_out ;; esac
	case $_lout in /*) ;; *) _lout=$P/src/$_lout ;; esac
	check "$_label: object byte-identical to the local compile" \
		same_file "$_lout" "$_out"
}

remote_case "relative" obj/util.o obj/util.local.o -O1 $COV -Iinc -c util.c
remote_case "-g" obj/util-g.o obj/util-g.local.o -O1 -g $COV -Iinc -c util.c
remote_case "absolute, -I outside, -MD" "$P/src/obj/main.o" \
	"$P/src/obj/main.local.o" -O1 -g $COV -I"$P/src/inc" -I"$P/absinc" \
	-MD -c "$P/src/main.c"
check "absolute: the .d lists what the local one lists" sh -c \
	"tr -d '\\\\\n' <'$P/src/obj/main.d' | tr -s ' ' >'$T/l.txt';
	 (cd '$P/src' && clang -O1 -g $COV -I'$P/src/inc' -I'$P/absinc' -MD \
	  -c '$P/src/main.c' -o '$P/src/obj/main.o.local2' -MF '$T/local.d' -MT '$P/src/obj/main.o');
	 tr -d '\\\\\n' <'$T/local.d' | tr -s ' ' >'$T/r.txt'; cmp -s '$T/l.txt' '$T/r.txt'"

hits=$(counter cache_hits)
farm "$BOLT" clang -O1 $COV -Iinc -c util.c -o obj/util.again.o
check "the same compile again: a cache hit" test "$(counter cache_hits)" = $((hits + 1))
check "the hit's object is the local object" \
	same_file "$P/src/obj/util.local.o" "$P/src/obj/util.again.o"

# the program from the farm's objects, its coverage under our file names
if command -v llvm-profdata-14 >/dev/null 2>&1 && command -v llvm-cov-14 >/dev/null 2>&1; then
	(cd "$P/src" && clang -fprofile-instr-generate obj/main.o obj/util.o -o prog) ||
		die "link"
	(cd "$P/src" && LLVM_PROFILE_FILE="$T/prog.profraw" ./prog a b >"$T/prog.out")
	check "the program runs: prints 13" grep -qx 13 "$T/prog.out"
	llvm-profdata-14 merge -o "$T/prog.profdata" "$T/prog.profraw"
	(cd "$P/src" && llvm-cov-14 export -summary-only ./prog \
		-instr-profile="$T/prog.profdata") >"$T/cov.json" 2>"$T/cov.err"
	# each file's name and covered lines, as llvm-cov resolves them
	$PYTHON - "$T/cov.json" >"$T/cov.txt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["data"][0]["files"]:
    print(f["filename"], f["summary"]["lines"]["covered"])
EOF
	sed 's/^/    /' "$T/cov.txt"
	check "llvm-cov: main.c under the client's path, lines covered" \
		awk -v f="$P/src/main.c" '$1 == f && $2 > 0 {ok=1} END {exit !ok}' "$T/cov.txt"
	check "llvm-cov: util.c under the client's path, lines covered" \
		awk -v f="$P/src/util.c" '$1 == f && $2 > 0 {ok=1} END {exit !ok}' "$T/cov.txt"
	check "llvm-cov: no path of the daemon's job dirs" sh -c \
		"! grep -q boltccd '$T/cov.txt'"
else
	note "llvm-profdata-14/llvm-cov-14 not installed: coverage report not checked"
fi

# local_case LABEL HOSTS ARGS...: compiled locally, reason coverage, no
# job on the daemon
local_case() {
	_label=$1; _hosts=$2; shift 2
	_loc=$(counter local_by_reason:coverage)
	_served=$(dstat "$DSPORT" dcc_compile_ok)
	farm "$_hosts" "$@" 2>"$T/err.txt"
	check "$_label: exit 0 (DISTCC_FALLBACK=0)" test $? = 0 || sed 's/^/    /' "$T/err.txt"
	check "$_label: compiled locally, reason coverage" \
		test "$(counter local_by_reason:coverage)" = $((_loc + 1))
	check "$_label: no job reached the daemon" \
		test "$(dstat "$DSPORT" dcc_compile_ok)" = "$_served"
}

local_case ",plain host" "127.0.0.1:$DPORT,bolt,plain" clang -O1 $COV -Iinc \
	-c util.c -o obj/plain.o
check ",plain host: the object is the local one" \
	same_file "$P/src/obj/util.local.o" "$P/src/obj/plain.o"
local_case "stock protocol 3 pump (,cpp,lzo,distcc)" "127.0.0.1:$DPORT,cpp,lzo,distcc" \
	clang -O1 $COV -Iinc -c util.c -o obj/p3.o
(cd "$P/src" && clang -E -Iinc util.c -o util.i) || die "clang -E"
local_case "preprocessed input" "$BOLT" clang -O1 $COV -c util.i -o obj/util-i.o
if command -v gcc >/dev/null 2>&1; then
	local_case "gcc --coverage" "$BOLT" gcc -O1 --coverage -Iinc -c util.c \
		-o obj/gcov.o
	check "gcc --coverage: the .gcno is written" test -s "$P/src/obj/gcov.gcno"
fi

# clang's profile use (-fprofile-instr-use=FILE): the profile is shipped
# with the headers in pump mode; the object is the local one, a changed
# profile is not served the old object, a ,plain host compiles locally
if command -v llvm-profdata-14 >/dev/null 2>&1; then
	# two profiles with other counts: the program run with and without
	# arguments
	(cd "$P/src" && clang -O1 $COV -Iinc -I"$P/absinc" main.c util.c \
		-o prog2) || die "link prog2"
	(cd "$P/src" && LLVM_PROFILE_FILE="$T/a.profraw" ./prog2 a b c d \
		>/dev/null && LLVM_PROFILE_FILE="$T/b.profraw" ./prog2 \
		>/dev/null) || die "run prog2"
	llvm-profdata-14 merge -o "$P/src/use.profdata" "$T/a.profraw" &&
		llvm-profdata-14 merge -o "$P/usedir.profdata" "$T/b.profraw" ||
		die "llvm-profdata"
	remote_case "-fprofile-instr-use=relative" obj/use.o obj/use.local.o \
		-O2 -fprofile-instr-use=use.profdata -Iinc -c util.c
	remote_case "-fprofile-instr-use=absolute, outside, -g" \
		"$P/src/obj/use2.o" "$P/src/obj/use2.local.o" -O2 -g \
		-fprofile-instr-use="$P/usedir.profdata" -Iinc -I"$P/absinc" \
		-c "$P/src/main.c"
	# the same command with other profile contents (main's branch taken
	# or not): not the old object
	remote_case "-fprofile-instr-use, main.c" obj/use5.o obj/use5.local.o \
		-O2 -fprofile-instr-use=use.profdata -Iinc -I"$P/absinc" \
		-c main.c
	cp "$P/src/use.profdata" "$T/keep.profdata"
	cp "$P/usedir.profdata" "$P/src/use.profdata"
	hits=$(counter cache_hits)
	remote_case "-fprofile-instr-use, the profile changed" obj/use3.o \
		obj/use3.local.o -O2 -fprofile-instr-use=use.profdata -Iinc \
		-I"$P/absinc" -c main.c
	check "a changed profile is no cache hit" \
		test "$(counter cache_hits)" = "$hits"
	check "the profiles matter: their objects differ" sh -c \
		"! cmp -s '$P/src/obj/use5.local.o' '$P/src/obj/use3.local.o'"
	cp "$T/keep.profdata" "$P/src/use.profdata"
	_loc=$(counter local_by_reason:profile-use)
	farm "127.0.0.1:$DPORT,bolt,plain" clang -O2 \
		-fprofile-instr-use=use.profdata -Iinc -c util.c -o obj/use4.o \
		2>"$T/err.txt"
	check "-fprofile-instr-use, ,plain host: compiled locally, reason profile-use" \
		test "$(counter local_by_reason:profile-use)" = $((_loc + 1))
	check "--explain: pump_only profile-use" sh -c \
		"cd '$P/src' && '$BOLTCC' --explain clang -fprofile-instr-use=use.profdata -c util.c -o x.o |
		 grep -q '\"pump_only\":\"profile-use\"'"
else
	note "llvm-profdata-14 not installed: profile use not checked"
fi

check "--explain: pump_only coverage" sh -c \
	"cd '$P/src' && '$BOLTCC' --explain clang $COV -c util.c -o x.o |
	 grep -q '\"pump_only\":\"coverage\"'"
check "daemon still alive" alive "$DPID"
finish
