#!/bin/sh
# oom.sh — txguard short of memory (RLIMIT_AS just above what it needs to
# start, then a little more, step by step): allocations fail at different
# points of setup, capture and restore. Whatever fails, it must fail closed:
# the run exits with the command's own code (its calls that could not be
# journaled refused with an errno) or 125, and the workspace is, at once or
# after `txguard recover`, exactly what it was. Not under ASan (its shadow
# memory needs a huge address space).
. "$(dirname "$0")/lib.sh"
require_runs
ws=$T/ws
st=$T/state
mkdir -p "$ws/sub"
head -c 3000000 /dev/urandom >"$ws/big"
echo small >"$ws/small"
echo deep >"$ws/sub/x"
manifest "$ws" >"$T/before"
CMD='echo x >small; echo y >big; rm sub/x; mkdir n; echo z >small; exit 1'

# limited KB ARGS: txguard ARGS with RLIMIT_AS of KB kilobytes.
limited() { (ulimit -v "$1" && shift && exec "$TXGUARD" "$@"); }

# The smallest limit (in 2 MB steps) under which `txguard -- true` runs.
lo=0
kb=8192
while [ $kb -le 1048576 ]; do
	if limited "$kb" -q --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" -- true >/dev/null 2>&1; then
		lo=$kb
		break
	fi
	kb=$((kb + 2048))
done
[ "$lo" -gt 0 ] || skip "txguard does not start under any RLIMIT_AS up to 1 GB here"
rm -rf "$st"

refused=0
step=0
kb=$((lo - 4096))
while [ $step -lt 16 ]; do
	rc=0
	limited "$kb" --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" -- sh -c "$CMD" \
		>"$T/out" 2>&1 || rc=$?
	case $rc in
	1) ;;
	125 | 127) ;; # txguard could not start or could not finish: recover below
	*) cat "$T/out" >&2; fail "RLIMIT_AS ${kb}K: exit $rc (want the command's 1, or 125)" ;;
	esac
	grep -q 'txguard.journal' "$T/out" && refused=$((refused + 1))
	rc=0
	"$TXGUARD" recover -w "$ws" --state-dir "$st" >"$T/rec" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { cat "$T/out" "$T/rec" >&2; fail "RLIMIT_AS ${kb}K: recover exited $rc"; }
	assert_manifest "RLIMIT_AS ${kb}K" "$T/before" "$ws"
	no_txn "$st"
	kb=$((kb + 1024))
	step=$((step + 1))
done
echo "ok: 16 limits from $((lo - 4096))K, $refused run(s) had calls refused for lack of memory, workspace exact every time"
