# common.sh — sourced by scripts/bench.sh and its helpers. Timing and table helpers.
# Everything big lives under $BENCH_CACHE (default /var/tmp/txguard-bench), kept between
# runs on purpose: generating the 1.5 GB tree takes minutes, and /tmp may be a small tmpfs.

BENCH_CACHE=${BENCH_CACHE:-/var/tmp/txguard-bench}
REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck disable=SC2034  # used by bench.sh, which sources this file
PY=/usr/bin/python3

say() { printf '%s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# now: wall clock in seconds with microseconds (bash 5's EPOCHREALTIME, no fork).
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }

# timed VAR CMD...: run CMD, store elapsed seconds in VAR; CMD's output is discarded
# unless BENCH_VERBOSE=1. Returns CMD's exit status.
timed() {
	local __var=$1 t0 t1 rc
	shift
	t0=$(now)
	if [ "${BENCH_VERBOSE:-0}" = 1 ]; then "$@"; else "$@" >/dev/null 2>&1; fi
	rc=$?
	t1=$(now)
	printf -v "$__var" '%s' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
	return $rc
}

# stats "v1 v2 ...": prints "median min" of the samples (failed ones, "nan", ignored).
stats() {
	printf '%s\n' $1 | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 }
		END { if (NR == 0) { print "nan nan"; exit }
		      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.4f %.4f\n", m, v[1] }'
}

# ratio A B: A/B with 3 decimals ("-" when B is 0 or missing).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.3f", a / b }'; }

# Result table: rows collected with row(), printed by table_print().
TABLE=()
row() { local IFS=$'\t'; TABLE+=("$*"); }
table_print() {
	{
		printf 'section\tvariant\tmedian\tmin\tratio(med)\tratio(min)\tnote\n'
		printf '%s\n' "${TABLE[@]}"
	} | column -t -s $'\t'
}
