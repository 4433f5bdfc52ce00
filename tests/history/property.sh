#!/bin/sh
# property.sh — the journal property test extended to history: random
# sequences of several committed runs, then `undo` back to a random point;
# the tree must equal the snapshot taken at that point (content, type, mode,
# link targets, hard-link counts, file mtimes). Seeded and reproducible:
#   TG_HISTORY_SEED (first seed, default 1), TG_HISTORY_CASES (default 2).
. "$(dirname "$0")/lib.sh"
require_runs
here=$(cd "$(dirname "$0")" && pwd)
first=${TG_HISTORY_SEED:-1}
cases=${TG_HISTORY_CASES:-2}

seed=$first
while [ "$seed" -lt $((first + cases)) ]; do
	rm -rf "$ws" "$TXGUARD_STATE_DIR"
	mkdir -p "$ws/d1/e" "$ws/d2"
	printf 'base a\n' >"$ws/a"; printf 'base b\n' >"$ws/d1/b"; ln -s a "$ws/c"
	nruns=$((3 + seed % 4))
	snapshot "$ws" >"$TG_TMP/snap.0"
	k=1 kept=""
	while [ "$k" -le "$nruns" ]; do
		python3 "$here/genops.py" "$seed" "$k" >"$TG_TMP/ops.sh"
		n0=$(ids | wc -l)
		tg -- sh "$TG_TMP/ops.sh" || fail "seed $seed run $k did not commit"
		snapshot "$ws" >"$TG_TMP/snap.$k"
		# A run that changed nothing takes no history slot, and only then.
		if [ "$(ids | wc -l)" -gt "$n0" ]; then
			kept="$kept $k"
		elif ! cmp -s "$TG_TMP/snap.$((k - 1))" "$TG_TMP/snap.$k"; then
			fail "seed $seed run $k changed the tree but left no history entry"
		fi
		k=$((k + 1))
	done
	nkept=$(echo $kept | wc -w)
	assert_eq "seed $seed: runs in history" "$nkept" "$(ids | wc -l)"
	[ "$nkept" -gt 0 ] || { seed=$((seed + 1)); continue; }
	# undo back to the state before kept run number `i` (1..nkept): undoes nkept..i
	i=$(python3 -c 'import random,sys; print(random.Random(int(sys.argv[1])).randint(1, int(sys.argv[2])))' "$seed" "$nkept")
	to=$(echo $kept | cut -d' ' -f"$i")
	target=$(ids | sed -n "$((nkept - i + 1))p")
	h undo "$target" >"$TG_TMP/out" 2>"$TG_TMP/err" ||
		fail "seed $seed: undo to before run $to failed: $(cat "$TG_TMP/err")"
	assert_eq "seed $seed: runs undone" $((nkept - i + 1)) "$(grep -c '^undone:' "$TG_TMP/out")"
	assert_tree "seed $seed: undo to before run $to of $nruns" "$(cat "$TG_TMP/snap.$((to - 1))")"
	seed=$((seed + 1))
done
