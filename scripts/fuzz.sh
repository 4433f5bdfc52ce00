#!/bin/sh
# fuzz.sh — build every libFuzzer target in the tree and run each for a while.
#
#   scripts/fuzz.sh [-t SECONDS] [-b BUILDDIR] [--merge] [TARGET...]
#
# Targets are the tests/*/fuzz_*.c files (fuzz_policy_load.c -> fuzz-policy-load),
# built only with -Dfuzzing=true in a clang build dir with ASan+UBSan
# (default build-fuzz, set up on first use). Each runs SECONDS (default 60,
# or $FUZZ_SECONDS) on a working copy of its seed corpus (tests/DIR/fuzz-corpus);
# --merge folds the inputs that found new coverage back into the seed corpus.
# Crashes are saved under fuzz/crashes/ (gitignored) as TARGET-crash-SHA1;
# turn each one into a regression test. Exit 0 when every target ran clean,
# 1 when one crashed or failed.
set -eu

cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
build="build-fuzz"
merge=0
while [ $# -gt 0 ]; do
	case $1 in
	-t) secs=$2; shift 2 ;;
	-b) build=$2; shift 2 ;;
	--merge) merge=1; shift ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done

command -v clang >/dev/null || { echo "fuzz.sh: clang is needed (apt install clang)" >&2; exit 2; }
if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false "$build" >/dev/null
fi

# name:source-dir of every target in the tree, or of the ones asked for.
all=$(find tests -name 'fuzz_*.c' | sort | while read -r src; do
	n=$(basename "$src" .c | tr _ -)
	echo "$n:$(dirname "$src")"
done)
[ -n "$all" ] || { echo "fuzz.sh: no fuzz_*.c targets under tests/" >&2; exit 2; }
if [ $# -gt 0 ]; then
	want=""
	for t in "$@"; do
		line=$(printf '%s\n' "$all" | grep "^$t:" || true)
		[ -n "$line" ] || { echo "fuzz.sh: no target $t (have: $(printf '%s\n' "$all" | cut -d: -f1 | tr '\n' ' '))" >&2; exit 2; }
		want="$want$line
"
	done
	all=$want
fi

targets=""
for line in $all; do targets="$targets ${line#*:}/${line%%:*}"; done
# shellcheck disable=SC2086 # a list of ninja targets
ninja -C "$build" $targets >/dev/null

mkdir -p fuzz/crashes
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
summary=""
for line in $all; do
	name=${line%%:*}
	dir=${line#*:}
	exe=$build/$dir/$name
	seeds=$dir/fuzz-corpus
	work=$build/fuzz-corpus/$name
	mkdir -p "$work"
	if [ -d "$seeds" ]; then cp -n "$seeds"/* "$work"/ 2>/dev/null || true; fi
	log=$build/fuzz-$name.log
	echo "== $name: ${secs}s on $work (seeds: $seeds)"
	rc=0
	"$exe" -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="fuzz/crashes/$name-" "$work" >"$log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		summary="$summary
$name: clean, ${runs:-?} runs, $cov"
	else
		status=1
		art=$(grep -o 'fuzz/crashes/[^ ]*' "$log" | tail -1)
		summary="$summary
$name: FAILED (exit $rc) after ${runs:-?} runs: ${art:-see $log}"
		grep -m1 -A12 '^==[0-9]*==ERROR\|runtime error\|deadly signal' "$log" >&2 || tail -20 "$log" >&2
	fi
	if [ "$merge" = 1 ] && [ -d "$seeds" ]; then
		"$exe" -merge=1 "$seeds" "$work" >>"$log" 2>&1 || true
	fi
done
echo "== summary$summary"
exit $status
