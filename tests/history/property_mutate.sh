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
	sed '/ type=4 /s/ mtime=[0-9.]*//' "$TG_TMP/hash.0" >"$TG_TMP/hash.0.nodirtimes"
	nruns=$((2 + seed % 4))
	k=1 kept=""
	while [ "$k" -le "$nruns" ]; do
		n0=$(ids | wc -l)
		tg -- "$TG_MUTATE" "$((seed * 100 + k))" "$((5 + (seed * 7 + k) % 30))" "$ws" ||
			fail "seed $seed run $k did not commit"
		"$TG_TREEHASH" "$ws" >"$TG_TMP/hash.$k"
		sed '/ type=4 /s/ mtime=[0-9.]*//' "$TG_TMP/hash.$k" >"$TG_TMP/hash.$k.nodirtimes"
		# A run whose records add up to no change takes no history slot
		# (seed 51's third: docs/history.md), and only such a run. What
		# it may leave is the times of a directory it made a name in and
		# removed it from again (seed 97's third).
		if [ "$(ids | wc -l)" -gt "$n0" ]; then
			kept="$kept $k"
			show_agrees "$(ids | sed -n 1p)"
		elif ! cmp -s "$TG_TMP/hash.$((k - 1)).nodirtimes" "$TG_TMP/hash.$k.nodirtimes"; then
			fail "seed $seed run $k changed the tree but left no history entry"
		fi
		k=$((k + 1))
	done
	nkept=$(echo $kept | wc -w)
	[ "$nkept" -gt 0 ] || { seed=$((seed + 1)); continue; }
	# undo back to the state before kept run number i (1..nkept)
	i=$((1 + (seed * 31) % nkept))
	to=$(echo $kept | cut -d' ' -f"$i")
	target=$(ids | sed -n "$((nkept - i + 1))p")
	h undo "$target" >"$TG_TMP/out" 2>"$TG_TMP/err" ||
		fail "seed $seed: undo to before run $to of $nruns failed: $(cat "$TG_TMP/err")"
	assert_eq "seed $seed: runs undone" $((nkept - i + 1)) "$(grep -c '^undone:' "$TG_TMP/out")"
	"$TG_TREEHASH" "$ws" >"$TG_TMP/now"
	if ! cmp -s "$TG_TMP/hash.$((to - 1))" "$TG_TMP/now"; then
		diff "$TG_TMP/hash.$((to - 1))" "$TG_TMP/now" | head -20 >&2
		fail "seed $seed: undo to before run $to of $nruns did not give that tree back"
	fi
	seed=$((seed + 1))
done
echo "ok: $count sequences (seeds $first..$((first + count - 1)))"
