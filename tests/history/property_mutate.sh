#!/bin/sh
# property_mutate.sh [COUNT [FIRST_SEED]] — the journal's property test
# (tests/journal/proptest.sh) extended to history, with the journal's own
# tools: tg-mutate (seeded random operations: renames incl. EXCHANGE and
# NOREPLACE, hard links, xattrs, sparse files, odd names...) as the traced
# command of several committed runs of the real binary, then `txguard undo`
# back to a random point; tg-treehash of the tree must equal the one taken
# at that point, mtimes included. Small count in CI; a longer run is
#   TG_MUTATE=... TG_TREEHASH=... TXGUARD=... property_mutate.sh 200
. "$(dirname "$0")/lib.sh"
[ -n "${TG_MUTATE:-}" ] && [ -n "${TG_TREEHASH:-}" ] || skip "tg-mutate / tg-treehash not built"
require_runs
count=${1:-3}
first=${2:-1}

seed=$first
while [ "$seed" -lt $((first + count)) ]; do
	rm -rf "$ws" "$TXGUARD_STATE_DIR"
	mkdir "$ws"
	"$TG_MUTATE" "$((seed + 1000000))" 120 "$ws"
	"$TG_TREEHASH" "$ws" >"$TG_TMP/hash.0"
	nruns=$((2 + seed % 4))
	k=1
	while [ "$k" -le "$nruns" ]; do
		tg -- "$TG_MUTATE" "$((seed * 100 + k))" "$((5 + (seed * 7 + k) % 30))" "$ws" ||
			fail "seed $seed run $k did not commit"
		"$TG_TREEHASH" "$ws" >"$TG_TMP/hash.$k"
		show_agrees "$(ids | sed -n 1p)"
		k=$((k + 1))
	done
	to=$((1 + (seed * 31) % nruns))
	target=$(ids | sed -n "$((nruns - to + 1))p")
	h undo "$target" >"$TG_TMP/out" 2>"$TG_TMP/err" ||
		fail "seed $seed: undo to before run $to of $nruns failed: $(cat "$TG_TMP/err")"
	"$TG_TREEHASH" "$ws" >"$TG_TMP/now"
	if ! cmp -s "$TG_TMP/hash.$((to - 1))" "$TG_TMP/now"; then
		diff "$TG_TMP/hash.$((to - 1))" "$TG_TMP/now" | head -20 >&2
		fail "seed $seed: undo to before run $to of $nruns did not give that tree back"
	fi
	seed=$((seed + 1))
done
echo "ok: $count sequences (seeds $first..$((first + count - 1)))"
