#!/bin/sh
# concurrent.sh — several processes of one traced tree create and remove
# files at the same time, then the run fails: the restore must succeed (the
# command's own exit code, not 125), give back the workspace exactly, and
# leave no journal behind. Each process has its own files here; a second
# round lets them fight over the same names.
#
# Why it is in the fault suite: the journal learns what a creation made
# from the call's own result (txn.c tg_txn_after: the fd an open returned).
# It used to learn it from the name, at the next trapped call: another
# process may have captured, removed or replaced the new file by then. The
# journal then took the creation for a failed one, the new file stayed
# unknown, its later removal was stashed as if it were an original, and the
# restore put it back and refused to put the original over it: exit 125,
# "undo (stashed g1-3): File exists", the journal kept (about once in 60
# "shared names" rounds under load; TG_FAULTS_CONCURRENT_ROUNDS=N for more,
# each round costs seconds under ASan). tests/journal's
# creation_known_by_its_result_whatever_the_name_holds forces the
# interleaving.
. "$(dirname "$0")/lib.sh"
require_runs
ws=$T/ws
st=$T/state
rounds=${TG_FAULTS_CONCURRENT_ROUNDS:-3}

fresh_ws() {
	rm -rf "$ws"
	mkdir -p "$ws"
	for w in 1 2 3 4; do for k in 0 1 2 3 4; do echo "g $w $k" >"$ws/g$w-$k"; done; done
	manifest "$ws" >"$T/before"
}

# run_round WHAT SCRIPT: SCRIPT (for sh -c, $1 = N) in 4 concurrent copies, then exit 1.
run_round() {
	fresh_ws
	rc=0
	tg -w "$ws" --state-dir "$st" -- sh -c '
		for w in 1 2 3 4; do sh -c "$1" sh $w & done
		wait; exit 1' sh "$2" >"$T/out" 2>&1 || rc=$?
	[ "$rc" = 1 ] || { cat "$T/out" >&2; fail "$1: exit $rc, expected the command's 1 (125 = the restore failed)"; }
	assert_manifest "$1" "$T/before" "$ws"
	no_txn "$st"
	rc=0
	tg -w "$ws" --state-dir "$st" -- true >"$T/out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { cat "$T/out" >&2; fail "$1: the next run on the workspace exits $rc"; }
}

r=0
while [ $r -lt "$rounds" ]; do
	# Only new files (make -j writing objects): every one must be gone.
	run_round "new files only, round $r" \
		'i=0; while [ $i -lt 50 ]; do i=$((i+1)); echo x >new-$1-$i; done'
	run_round "own names, round $r" \
		'i=0; while [ $i -lt 150 ]; do i=$((i+1)); rm -f g$1-$((i % 5)); echo x$i >g$1-$((i % 5)); done'
	run_round "shared names, round $r" \
		'i=0; while [ $i -lt 150 ]; do i=$((i+1)); rm -f g1-$((i % 5)); echo x$i >g1-$((i % 5)); done'
	r=$((r + 1))
done
echo "ok: $rounds rounds of concurrent create/remove restored"
