#!/bin/sh
# summary_prop.sh COUNT [FIRST_SEED]: does the report say what a run did?
# For each seed, tg-mutate makes a tree, then runs seeded random operations
# on it (renames incl. RENAME_EXCHANGE and NOREPLACE, hard links, removals
# of files and trees, xattrs, odd names...) as the command of a committed
# txguard run. summary_check.py compares the report's "changes" with the
# manifests of the tree before and after: each line must name what the tree
# shows, and every name that appeared, went or changed must be on a line
# (or below a directory whose line carries it). Every third seed keeps the
# state dir on another filesystem when there is one (no stash links:
# removed files are saved as copies). With TG_SUMMARY_CONC=1, every third
# other seed runs two tg-mutates at once in the tree (their records
# interleave; neither is alone): not in CI, since seeds 54 and 393 of
# those still fail in some runs, a change through a second hard-link name
# (docs/journal.md, "Known limits").
# Prints the failing seed, what is wrong, and how to run it again.
set -eu
. "${TXGUARD_SOURCE_DIR:?}/tests/lib/common.sh"
count=${1:-20}
first=${2:-1}
: "${TG_MUTATE:?}" "${TG_TREEHASH:?}" "${TXGUARD:?}"
command -v python3 >/dev/null || skip "needs python3"
tg_tmpdir
printf 'version: 1\n' >"$TG_TMP/policy.yaml"
ws=$TG_TMP/ws
other=
for d in /dev/shm /var/tmp; do
	if [ -d "$d" ] && [ -w "$d" ] && [ "$(stat -c %d "$d")" != "$(stat -c %d "$TG_TMP")" ]; then
		other=$(mktemp -d "$d/tg-summary-state.XXXXXX")
		break
	fi
done
trap 'rm -rf "$TG_TMP" ${other:+"$other"}' EXIT
seed=$first
while [ "$seed" -lt $((first + count)) ]; do
	st=$TG_TMP/state
	[ -z "$other" ] || [ $((seed % 3)) != 1 ] || st=$other/state
	rm -rf "$ws" "$st"
	mkdir "$ws"
	"$TG_MUTATE" "$((seed + 3000000))" "$((60 + seed % 90))" "$ws" >/dev/null
	"$TG_TREEHASH" "$ws" >"$TG_TMP/before"
	n=$((10 + seed % 40))
	if [ "${TG_SUMMARY_CONC:-0}" = 1 ] && [ $((seed % 3)) = 0 ]; then
		cmd="\"\$0\" $seed $n . & \"\$0\" $((seed + 777777)) $n .; wait"
	else
		cmd="exec \"\$0\" $seed $n ."
	fi
	(cd "$ws" && "$TXGUARD" --no-default-policy -p "$TG_TMP/policy.yaml" -q --state-dir "$st" -w "$ws" \
		--report "$TG_TMP/r.json" -- sh -c "$cmd" "$TG_MUTATE") >/dev/null ||
		fail "seed $seed: the run did not commit"
	"$TG_TREEHASH" "$ws" >"$TG_TMP/after"
	if ! python3 "$TXGUARD_SOURCE_DIR/tests/journal/summary_check.py" "$TG_TMP/before" "$TG_TMP/after" \
		"$TG_TMP/r.json" >"$TG_TMP/why"; then
		head -20 "$TG_TMP/why" >&2
		fail "seed $seed: the report's changes disagree with the tree (again: $0 1 $seed)"
	fi
	seed=$((seed + 1))
done
echo "ok: $count runs (seeds $first..$((first + count - 1)))"
