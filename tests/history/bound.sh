#!/bin/sh
# bound.sh — history is bounded, oldest dropped first: the default bound of
# 50 runs (52 runs leave the 50 newest, the 2 oldest journals are gone from
# disk), then small count and size bounds set through the environment
# (TXGUARD_HISTORY_MAX_RUNS / TXGUARD_HISTORY_MAX_BYTES).
. "$(dirname "$0")/lib.sh"
require_runs

i=1
while [ "$i" -le 52 ]; do
	tg -- sh -c "echo $i > f" || fail "run $i"
	[ "$i" -le 2 ] && eval "old$i=\$(ids | sed -n 1p)"
	i=$((i + 1))
done
assert_eq "default bound keeps 50" 50 "$(ids | wc -l)"
assert_eq "the newest is the last run" "'echo 52 > f'" "$(field "$(ids | sed -n 1p)" command | sed 's/^sh -c //')"
for o in "$old1" "$old2"; do
	ids | grep -qx "$o" && fail "the oldest run $o is still listed"
	[ ! -e "$TXGUARD_STATE_DIR/txn/$o" ] || fail "the dropped run's journal $o is still on disk"
	assert_eq "a dropped run cannot be shown" 1 "$(code h show "$o" 2>/dev/null)"
done
# undo reaches back exactly to the bound: f as the 3rd run left it
h undo "$(ids | sed -n 50p)" >/dev/null || fail "undo of the oldest kept run"
assert_eq "undone back to the bound" 2 "$(cat "$ws/f")"

rm -rf "$TXGUARD_STATE_DIR"
export TXGUARD_HISTORY_MAX_RUNS=3
for i in 1 2 3 4 5; do
	tg -- sh -c "echo $i > f$i" || fail "run $i"
	eval "id$i=\$(ids | sed -n 1p)"
done
[ "$(ids | wc -l)" -eq 5 ] && skip "TXGUARD_HISTORY_MAX_RUNS is not supported: the bound cannot be set small"
assert_eq "newest first, oldest dropped" "$id5
$id4
$id3" "$(ids)"
unset TXGUARD_HISTORY_MAX_RUNS

# size bound: each run saves 64 KiB of incompressible pre-image
rm -rf "$TXGUARD_STATE_DIR"
export TXGUARD_HISTORY_MAX_BYTES=150000
head -c 65536 /dev/urandom >"$ws/big"
for i in 1 2 3 4; do
	tg -- sh -c "head -c 65536 /dev/urandom > big" || fail "big run $i"
done
total=$(h log --json | python3 -c 'import json,sys; print(sum(e["journal_bytes"] for e in json.load(sys.stdin)))')
[ "$(ids | wc -l)" -ge 1 ] || fail "the size bound dropped the newest run too"
[ "$(ids | wc -l)" -eq 1 ] || [ "$total" -le 150000 ] || fail "history holds $total bytes, over the 150000 bound"
[ "$(ids | wc -l)" -lt 4 ] || fail "the size bound dropped nothing"
