#!/bin/sh
# Run every libFuzzer target of a --enable-fuzzing build for a fixed
# number of executions or a time cap, whichever comes first, and write
# one table of executions, coverage and findings.
#
#   tests/fuzz/campaign.sh BUILDDIR WORKDIR [TARGET...]
#
# BUILDDIR: a `CC=clang configure --enable-fuzzing` build, made.
# WORKDIR:  per target a corpus (seeded from tests/fuzz/seeds/<name>),
#           its log, crashes, and results.md (the table, one row per
#           target, appended as each one ends).
# Environment: FUZZ_RUNS (default 10000000), FUZZ_MAX_TIME seconds
# (default 1800), FUZZ_TIMEOUT per input (default 10), FUZZ_NICE (10).
set -u
build=${1:?usage: campaign.sh BUILDDIR WORKDIR [TARGET...]}
work=${2:?usage: campaign.sh BUILDDIR WORKDIR [TARGET...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
runs=${FUZZ_RUNS:-10000000}
max_time=${FUZZ_MAX_TIME:-1800}
timeout=${FUZZ_TIMEOUT:-10}
nice_level=${FUZZ_NICE:-10}

targets="$*"
if [ -z "$targets" ]; then
	for f in "$here"/fuzz_*.c; do
		n=$(basename "$f" .c)
		targets="$targets ${n#fuzz_}"
	done
fi

mkdir -p "$work" || exit 1
table="$work/results.md"
if [ ! -f "$table" ]; then
	{
		echo "| target | executions | seconds | exec/s | cov | ft | corpus | findings |"
		echo "|--------|-----------:|--------:|-------:|----:|---:|-------:|----------|"
	} > "$table"
fi

# The options file's [libfuzzer] keys become -key=value flags; a
# dictionary is looked up beside the target's source.
target_flags() {
	opt="$here/fuzz_$1.options"
	[ -f "$opt" ] || return 0
	sed -n 's/^[ \t]*\([a-z_]*\)[ \t]*=[ \t]*\(.*\)$/\1 \2/p' "$opt" |
	while read -r key value; do
		case $key in
		dict) printf ' -dict=%s' "$here/$value" ;;
		*) printf ' -%s=%s' "$key" "$value" ;;
		esac
	done
}

run_target() {
	name=$1
	bin="$build/tests/fuzz/fuzz_$name"
	if [ ! -x "$bin" ]; then
		echo "campaign: $bin not built" >&2
		return 1
	fi
	dir="$work/$name"
	mkdir -p "$dir/corpus" "$dir/crashes"
	cp "$here/seeds/$name"/* "$dir/corpus/" 2>/dev/null
	log="$dir/fuzz.log"
	echo "campaign: fuzz_$name: up to $runs runs or ${max_time}s" >&2
	start=$(date +%s)
	# shellcheck disable=SC2046
	nice -n "$nice_level" "$bin" -runs="$runs" \
		-max_total_time="$max_time" -timeout="$timeout" \
		-print_final_stats=1 -artifact_prefix="$dir/crashes/" \
		$(target_flags "$name") "$dir/corpus" > "$log" 2>&1
	rc=$?
	end=$(date +%s)
	summarize "$name" "$rc" $((end - start)) "$log" "$dir"
}

# The last status line has cov/ft/corp; print_final_stats gives the
# number of executions.
summarize() {
	name=$1 rc=$2 secs=$3 log=$4 dir=$5
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	line=$(grep -E '^#[0-9]+' "$log" | grep ' cov: ' | tail -n 1)
	cov=$(printf '%s\n' "$line" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$line" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$line" | sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p')
	ncrash=$(find "$dir/crashes" -type f | wc -l)
	if [ "$rc" -eq 0 ] && [ "$ncrash" -eq 0 ]; then
		findings=none
	else
		findings="exit $rc, $ncrash artifact(s): $(ls "$dir/crashes" | head -n 3 | tr '\n' ' ')"
	fi
	[ -n "$execs" ] || execs=0
	rate=0
	[ "$secs" -gt 0 ] && rate=$((execs / secs))
	echo "| fuzz_$name | $execs | $secs | $rate | ${cov:-?} | ${ft:-?} | ${corp:-?} | $findings |" >> "$table"
	echo "campaign: fuzz_$name: $execs runs in ${secs}s, cov ${cov:-?}, $findings" >&2
}

status=0
for t in $targets; do
	run_target "$t" || status=1
done
cat "$table"
exit $status
