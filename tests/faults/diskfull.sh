#!/bin/sh
# diskfull.sh — the journal's filesystem fills up during capture: the call
# it protects must fail with ENOSPC and never run unjournaled, and the run's
# restore must still give the workspace back exactly.
#
# The state dir is a tiny tmpfs mounted in a private mount namespace (see
# lib.sh). Two layouts: the workspace on another filesystem (the journal
# cannot hard-link, so even unlink and rename-over must copy bytes), and the
# workspace on the same tmpfs as the journal (unlink is an O(1) hard link,
# in-place overwrite still copies).
TG_FAULTS_NS=${TG_FAULTS_NS:-want}
. "$(dirname "$0")/lib.sh"
: "${TG_PROBE:?run through meson test (TG_PROBE unset)}"
require_runs
# shellcheck disable=SC2034 # read by tg() in lib.sh
TG_Q= # the runs' own messages land in $T/err, shown on failure

# random_file PATH BYTES: incompressible content (zstd cannot save us room).
random_file() { head -c "$2" /dev/urandom >"$1"; }

# expect_rc WHAT WANT: the run's exit code ($rc), with its stderr when wrong.
expect_rc() {
	[ "$rc" = "$2" ] || { cat "$T/err" >&2 2>/dev/null || true; fail "$1: expected exit $2, got $rc"; }
}

# expect_errno WHAT WANT OUTFILE: the probe inside the run printed "err WANT".
expect_errno() {
	got=$(grep -c "^err $2\$" "$3" || true)
	[ "$got" -ge 1 ] || { cat "$3" >&2; fail "$1: expected the call to fail with $2"; }
}

# --- 1. workspace on another filesystem: every pre-image is a copy -------
st=$T/mnt/state
mount_tmpfs "$st" 256k
ws=$T/ws
mkdir -p "$ws/sub"
random_file "$ws/big" 2000000
random_file "$ws/sub/big2" 1500000
echo small >"$ws/small"
echo keep >"$ws/sub/keep"
manifest "$ws" >"$T/before"

# An in-place overwrite of a file larger than the journal's room: the open
# fails with ENOSPC, the file is untouched; a later small change is journaled
# (the failed capture left no torn frame behind) and the failing exit restores it.
rc=0; tg -w "$ws" --state-dir "$st" -- sh -c '
	"$1" openat . big wt
	echo changed >small
	echo new >sub/new
	exit 3' sh "$TG_PROBE" >"$T/out" 2>"$T/err" || rc=$?
expect_errno "overwrite of a 2 MB file on a full journal" ENOSPC "$T/out"
expect_rc "exit code of the failed run (the command's own)" 3
assert_manifest "cross-fs overwrite then failure" "$T/before" "$ws"
no_txn "$st"

# Removal and rename-over cannot hard-link across filesystems: the bytes must
# be saved first, which does not fit: both calls fail, nothing is lost even
# though the run then exits 0 and commits.
rc=0; tg -w "$ws" --state-dir "$st" -- sh -c '
	"$1" unlink big
	"$1" rename small sub/big2
	"$1" unlinkat . sub/big2
	true' sh "$TG_PROBE" >"$T/out" 2>"$T/err" || rc=$?
expect_rc "exit code of the committed run" 0
[ "$(grep -c '^err ENOSPC$' "$T/out")" = 3 ] || { cat "$T/out" >&2; fail "unlink/rename-over on a full cross-fs journal: expected 3 x ENOSPC"; }
assert_manifest "cross-fs unlink and rename-over refused" "$T/before" "$ws"
no_txn "$st"

# The journal fills up in the middle of a run of many small overwrites:
# those journaled went through, the rest were refused, and the restore puts
# every file back.
i=0
while [ $i -lt 40 ]; do random_file "$ws/sub/f$i" 16384; i=$((i + 1)); done
manifest "$ws" >"$T/before"
rc=0; tg -w "$ws" --state-dir "$st" -- sh -c '
	for f in sub/f*; do "$1" openat . "$f" wt; done
	exit 1' sh "$TG_PROBE" >"$T/out" 2>"$T/err" || rc=$?
ok=$(grep -c '^ok' "$T/out" || true)
full=$(grep -c '^err ENOSPC$' "$T/out" || true)
{ [ "$ok" -ge 1 ] && [ "$full" -ge 1 ]; } || { cat "$T/out" "$T/err" >&2; fail "expected some overwrites journaled and some refused (ok=$ok enospc=$full)"; }
[ $((ok + full)) = 40 ] || fail "unexpected probe results: $(sort "$T/out" | uniq -c)"
expect_rc "exit code of the failed run" 1
assert_manifest "journal filled mid-run, then restored" "$T/before" "$ws"
no_txn "$st"

# After all that the workspace takes a normal run again.
rc=0; tg -w "$ws" --state-dir "$st" -- sh -c 'echo ok >small' 2>"$T/err" || rc=$?
expect_rc "a normal run after the faults" 0
assert_eq "the normal run's change" ok "$(cat "$ws/small")"

# --- 2. workspace and journal on one (small) filesystem ---------------------
# Hard links keep removed files alive in O(1); in-place overwrites still copy.
same=$T/mnt/same
mount_tmpfs "$same" 1m
ws2=$same/ws
st2=$same/state
mkdir -p "$ws2"
random_file "$ws2/big" 600000
echo small >"$ws2/small"
manifest "$ws2" >"$T/before2"
rc=0; tg -w "$ws2" --state-dir "$st2" -- sh -c '
	"$1" openat . big wt
	"$1" unlink big
	"$1" rename small big2
	exit 1' sh "$TG_PROBE" >"$T/out" 2>"$T/err" || rc=$?
assert_eq "same-fs: overwrite refused, unlink and rename journaled" "err ENOSPC
ok 0
ok 0" "$(cat "$T/out")"
expect_rc "same-fs: exit code" 1
assert_manifest "same-fs: restored after unlink (hard-link stash)" "$T/before2" "$ws2"
no_txn "$st2"

echo "ok: disk-full faults fail closed and restore exactly"
