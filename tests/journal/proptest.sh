#!/bin/sh
# proptest.sh COUNT [FIRST_SEED]: random op sequences through the journal
# (tg-mutate --hook calls tg_txn_before itself, as the tracer would).
#  - rollback: the manifest afterwards equals the one before, mtimes included;
#  - commit: the tree equals the same ops run without txguard (mtimes left
#    out: the two runs happen at different times).
#  - undo, redo, undo: the committed sequence undone as `txguard undo` does
#    it (journaling itself) gives the tree of before back; redo (the undo
#    undone) gives the committed tree back; undone again, the tree of
#    before once more: every comparison with mtimes included.
# Manifests hold type, mode, owner, size, content, link target, hard-link
# groups, xattrs (user.*; as root trusted.*, ACLs, capabilities) and mtime.
# Odd seeds put the state dir on another filesystem than the workspace
# (no stash link: removed files are copied, link groups rejoined).
# Prints the failing seed and both manifests' diff.
set -eu
count=${1:-300}
first=${2:-1}
: "${TG_MUTATE:?}" "${TG_TREEHASH:?}"
# tmpfs by default: the same code paths, but fsync costs nothing there, so
# hundreds of sequences fit in a CI budget. TG_PROPTEST_DIR=... to choose.
base=${TG_PROPTEST_DIR:-}
if [ -z "$base" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then base=/dev/shm; else base=${TMPDIR:-/tmp}; fi
fi
tmp=$(mktemp -d "$base/tg-proptest.XXXXXX")
other=$(mktemp -d "${TMPDIR:-/tmp}/tg-proptest-state.XXXXXX")
trap 'rm -rf "$tmp" "$other"' EXIT
[ "$(stat -c %d "$other")" != "$(stat -c %d "$tmp")" ] || { rm -rf "$other"; other=; }

seed=$first
last=$((first + count - 1))
while [ "$seed" -le "$last" ]; do
	state=$tmp/state
	[ -z "$other" ] || [ $((seed % 2)) = 0 ] || state=$other/state
	rm -rf "$tmp/ws" "$tmp/ref" "$tmp/state" "${other:-$tmp/none}/state"
	mkdir "$tmp/ws"
	"$TG_MUTATE" "$((seed + 1000000))" "$((100 + seed % 150))" "$tmp/ws"
	cp -a "$tmp/ws" "$tmp/ref"
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/before"
	"$TG_TREEHASH" "$tmp/ws" --no-mtime >"$tmp/before-nomtime"
	nops=$((5 + seed % 60))
	# every 10th sequence is long: name reuse, inode reuse, deep histories
	[ $((seed % 10)) != 0 ] || nops=$((300 + seed * 7 % 1700))
	if ! "$TG_MUTATE" "$seed" "$nops" "$tmp/ws" --hook "$state" --end rollback; then
		echo "FAIL: seed $seed: rollback run failed" >&2; exit 1
	fi
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/after"
	if ! cmp -s "$tmp/before" "$tmp/after"; then
		echo "FAIL: seed $seed ($nops ops): rollback did not restore the tree" >&2
		diff "$tmp/before" "$tmp/after" | head -20 >&2
		exit 1
	fi
	# commit: same ops on a copy with and without the journal
	"$TG_MUTATE" "$seed" "$nops" "$tmp/ref"
	"$TG_MUTATE" "$seed" "$nops" "$tmp/ws" --hook "$state" --end commit || {
		echo "FAIL: seed $seed: commit run failed" >&2; exit 1; }
	"$TG_TREEHASH" "$tmp/ws" --no-mtime >"$tmp/a"
	"$TG_TREEHASH" "$tmp/ref" --no-mtime >"$tmp/b"
	if ! cmp -s "$tmp/a" "$tmp/b"; then
		echo "FAIL: seed $seed: commit changed the command's effects" >&2
		diff "$tmp/b" "$tmp/a" | head -20 >&2
		exit 1
	fi
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/committed"
	# undo of the committed sequence: the tree of before, mtimes included
	rc=0
	"$TG_MUTATE" undo "$tmp/ws" "$state" --journaled || rc=$?
	if [ "$rc" = 4 ]; then
		# No history entry: the sequence's records added up to no change
		# (what it made it removed again). Then the tree must be the one of
		# before, but for the mtimes of the directories it touched, which a
		# run that leaves no entry does not keep.
		"$TG_TREEHASH" "$tmp/ws" --no-mtime >"$tmp/undone"
		cmp -s "$tmp/before-nomtime" "$tmp/undone" || {
			echo "FAIL: seed $seed: no history entry, yet the committed run changed the tree" >&2
			diff "$tmp/before-nomtime" "$tmp/undone" | head -20 >&2
			exit 1; }
		seed=$((seed + 1))
		continue
	fi
	[ "$rc" = 0 ] || { echo "FAIL: seed $seed: undo failed" >&2; exit 1; }
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/undone"
	if ! cmp -s "$tmp/before" "$tmp/undone"; then
		echo "FAIL: seed $seed ($nops ops, state $state): undo did not restore the tree" >&2
		diff "$tmp/before" "$tmp/undone" | head -20 >&2
		exit 1
	fi
	# redo: the undo undone, the committed tree back, mtimes included
	"$TG_MUTATE" redo "$tmp/ws" "$state" || { echo "FAIL: seed $seed ($nops ops, state $state): redo failed" >&2; exit 1; }
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/redone"
	if ! cmp -s "$tmp/committed" "$tmp/redone"; then
		echo "FAIL: seed $seed ($nops ops, state $state): redo did not give the committed tree back" >&2
		diff "$tmp/committed" "$tmp/redone" | head -20 >&2
		exit 1
	fi
	# undone again: the run's own journal once more (its stash given back)
	"$TG_MUTATE" undo "$tmp/ws" "$state" --journaled || { echo "FAIL: seed $seed ($nops ops, state $state): second undo failed" >&2; exit 1; }
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/undone2"
	if ! cmp -s "$tmp/before" "$tmp/undone2"; then
		echo "FAIL: seed $seed ($nops ops, state $state): undo after redo did not restore the tree" >&2
		diff "$tmp/before" "$tmp/undone2" | head -20 >&2
		exit 1
	fi
	seed=$((seed + 1))
done
echo "ok: $count sequences (seeds $first..$last)"
