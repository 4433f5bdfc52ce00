#!/bin/sh
# undo_crash.sh COUNT [FIRST_SEED]: an undo journals itself; SIGKILL it
# after a random number of its steps (the step's record durable, the step
# not made), then recover: the interrupted undo is reverted as a whole —
# the tree is the committed one again, mtimes included, and the run is
# committed (not half undone): undo, redo and undo then give the trees of
# before, after, before. The state dir is on another filesystem for odd
# seeds, as in proptest.sh.
set -eu
count=${1:-20}
first=${2:-1}
: "${TG_MUTATE:?}" "${TG_TREEHASH:?}"
base=${TG_PROPTEST_DIR:-}
if [ -z "$base" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base=${TMPDIR:-/tmp}; fi
fi
tmp=$(mktemp -d "$base/tg-undocrash.XXXXXX")
other=$(mktemp -d "${TMPDIR:-/tmp}/tg-undocrash-state.XXXXXX")
trap 'rm -rf "$tmp" "$other"' EXIT
[ "$(stat -c %d "$other")" != "$(stat -c %d "$tmp")" ] || { rm -rf "$other"; other=; }

same() { # WHAT WANT GOT
	cmp -s "$2" "$3" && return 0
	echo "FAIL: seed $seed (killed after $k steps, state $state): $1" >&2
	diff "$2" "$3" | head -20 >&2
	exit 1
}

killed=0 seed=$first
last=$((first + count - 1))
while [ "$seed" -le "$last" ]; do
	state=$tmp/state
	[ -z "$other" ] || [ $((seed % 2)) = 0 ] || state=$other/state
	rm -rf "$tmp/ws" "$tmp/state" "${other:-$tmp/none}/state"
	mkdir "$tmp/ws"
	"$TG_MUTATE" "$((seed + 3000000))" 150 "$tmp/ws"
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/before"
	"$TG_MUTATE" "$seed" "$((20 + seed % 80))" "$tmp/ws" --hook "$state" --end commit
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/after"
	k=$((1 + (seed * 7919) % 25))
	rc=0
	"$TG_MUTATE" undo "$tmp/ws" "$state" --journaled --die-step "$k" 2>/dev/null || rc=$?
	case $rc in
	4)	seed=$((seed + 1)); continue ;;  # the run changed nothing: no entry
	0)	;;                               # fewer steps than k: it finished
	*)	killed=$((killed + 1))
		"$TG_MUTATE" recover "$tmp/ws" "$state" >/dev/null || { echo "FAIL: seed $seed: recover failed" >&2; exit 1; }
		"$TG_TREEHASH" "$tmp/ws" >"$tmp/now"
		same "the interrupted undo was not reverted" "$tmp/after" "$tmp/now"
		"$TG_MUTATE" undo "$tmp/ws" "$state" --journaled || { echo "FAIL: seed $seed: undo after recovery failed" >&2; exit 1; } ;;
	esac
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/now"
	same "undo" "$tmp/before" "$tmp/now"
	"$TG_MUTATE" redo "$tmp/ws" "$state" || { echo "FAIL: seed $seed: redo failed" >&2; exit 1; }
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/now"
	same "redo" "$tmp/after" "$tmp/now"
	"$TG_MUTATE" undo "$tmp/ws" "$state" --journaled || { echo "FAIL: seed $seed: undo after redo failed" >&2; exit 1; }
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/now"
	same "undo after redo" "$tmp/before" "$tmp/now"
	seed=$((seed + 1))
done
echo "ok: $count sequences ($killed undos killed part-way and reverted by recovery)"
