#!/bin/sh
# test.sh — build txguard and run the whole test suite twice: a normal build,
# then an AddressSanitizer + UBSan build. Ends with one line
# "N passed, N failed, N skipped". Exit status non-zero on any failure.
#
# TXGUARD_TESTS_MUST_WORK=1 (set by .ci/run) turns skips for missing kernel
# features into failures.
set -eu
cd "$(dirname "$0")/.."

passed=0 failed=0 skipped=0

count() {
	# meson's testlog.json: one JSON object per test.
	eval "$(python3 - "$1" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(f"p={p} f={f} s={s}")
PY
)"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

run_suite() {
	dir=$1
	shift
	if [ ! -d "$dir" ]; then
		meson setup "$dir" "$@" >/dev/null
	else
		meson configure "$dir" "$@" >/dev/null
	fi
	ninja -C "$dir" >/dev/null
	rc=0
	meson test -C "$dir" --print-errorlogs --num-processes 2 || rc=$?
	count "$dir/meson-logs/testlog.json"
	return $rc
}

status=0
echo "== build and test (gcc, debugoptimized)"
run_suite build-test -Dtests=true || status=1
echo "== build and test (AddressSanitizer + UBSan)"
run_suite build-asan -Dtests=true -Db_sanitize=address,undefined -Db_lundef=false || status=1

echo "$passed passed, $failed failed, $skipped skipped"
exit $status
