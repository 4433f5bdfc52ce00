#!/bin/sh
# eio.sh — the journal's disk returns EIO (an LD_PRELOAD shim on txguard):
#  1. pre-images cannot be written (pre.tar.zst fails): an overwrite of a
#     workspace file is refused with EIO, the file keeps its bytes, and the
#     run's other changes are rolled back;
#  2. the record log cannot be written: every journaled call is refused,
#     nothing in the workspace changes, even when the command exits 0;
#  3. with the fault gone, the next run works and nothing is left open;
#  4. the commit's files cannot be made durable (post's fsync, which the
#     commit makes together with the tar's end and info's, fails): the
#     command's effects stay, no run is left open or listed as committed;
#  5. the syncs a committed run makes (counted by the shim, nothing fails):
#     the log once, for the capture, not again at commit; post, the tar's
#     end and the committing info.tmp each fsync'd.
. "$(dirname "$0")/lib.sh"
: "${TG_EIO_SHIM:?run through meson test}"
require_runs
ws=$T/ws
st=$T/state
mkdir -p "$ws"
head -c 300000 /dev/urandom >"$ws/big"
echo keep >"$ws/small"
big_sum=$(sha256sum <"$ws/big")

# --- 1. the pre-image store fails ---
rc=0
env LD_PRELOAD="$TG_EIO_SHIM" TG_EIO_MATCH=pre.tar.zst "$TXGUARD" --no-default-policy \
	-p "$T/policy.yaml" -w "$ws" --state-dir "$st" --journal-sync full \
	-- sh -c 'touch created; echo new > big; echo "big:$?"' >"$T/out1" 2>"$T/err1" || rc=$?
grep -q "big:[1-9]" "$T/out1" || { cat "$T/out1" "$T/err1" >&2; fail "the overwrite of big was not refused"; }
grep -qi "input/output error\|EIO" "$T/err1" || { cat "$T/err1" >&2; fail "the refusal did not carry EIO"; }
assert_eq "big after the refused overwrite" "$big_sum" "$(sha256sum <"$ws/big")"
# The command exited 0 (its echo ran), so the run committed: created stays,
# big is untouched.
assert_eq "exit of run 1" 0 "$rc"
[ -e "$ws/created" ] || fail "the journaled create did not happen"
rm "$ws/created"
manifest "$ws" >"$T/before"

# --- 2. the record log fails: nothing journaled, nothing changes ---
rc=0
env LD_PRELOAD="$TG_EIO_SHIM" TG_EIO_MATCH=/log "$TXGUARD" --no-default-policy \
	-p "$T/policy.yaml" -w "$ws" --state-dir "$st" --journal-sync full \
	-- sh -c 'rm -f small; echo x > big; mkdir d; touch n; exit 0' >"$T/out2" 2>"$T/err2" || rc=$?
case $rc in
0 | 125) ;;
*) cat "$T/err2" >&2; fail "run 2 ended with $rc" ;;
esac
assert_manifest "after run 2 (log unwritable)" "$T/before" "$ws"

# --- 3. the fault is gone: a normal run works and leaves nothing open ---
rc=0
"$TXGUARD" -q --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" \
	-- sh -c 'echo changed > small; exit 1' || rc=$?
assert_eq "exit of run 3" 1 "$rc"
assert_manifest "after run 3" "$T/before" "$ws"
no_txn "$st"

# --- 4. the commit's fsync fails: effects kept, nothing left open ---
runs() { "$TXGUARD" log --state-dir "$st" -w "$ws" --json | grep -o '"id":' | wc -l; }
before=$(runs)
rc=0
env LD_PRELOAD="$TG_EIO_SHIM" TG_EIO_MATCH=/post TG_EIO_SYNC_ONLY=1 "$TXGUARD" --no-default-policy \
	-p "$T/policy.yaml" -w "$ws" --state-dir "$st" --journal-sync full \
	-- sh -c 'echo "commit /post" > small' >"$T/out4" 2>"$T/err4" || rc=$?
assert_eq "exit of run 4" 0 "$rc"
grep -q "commit could not record history" "$T/err4" ||
	{ cat "$T/err4" >&2; fail "the failed commit was not reported"; }
assert_eq "small after run 4" "commit /post" "$(cat "$ws/small")"
no_txn "$st"
assert_eq "history entries after the failed commit" "$before" "$(runs)"
# The same command without the fault: one entry more (the count above sees runs).
before=$(runs)
tg -w "$ws" --state-dir "$st" -- sh -c 'echo again > small'
assert_eq "history entries after a commit" "$((before + 1))" "$(runs)"

# --- 5. what a commit syncs: each of its files, and no synced log again ---
echo before >"$ws/small"
rm -f "$T/syncs"
env LD_PRELOAD="$TG_EIO_SHIM" TG_EIO_MATCH=/txn/ TG_SYNC_LOG="$T/syncs" "$TXGUARD" -q --no-default-policy \
	-p "$T/policy.yaml" -w "$ws" --state-dir "$st" --journal-sync full -- sh -c 'echo after > small'
assert_eq "small after run 5" after "$(cat "$ws/small")"
count() { grep -c "^$1 .*/$2\$" "$T/syncs" || true; }
assert_eq "fdatasyncs of the log (the capture's record only)" 1 "$(count fdatasync log)"
assert_eq "fsyncs of post" 1 "$(count fsync post)"
assert_eq "fsyncs of the tar at commit (its end)" 1 "$(count fsync pre.tar.zst)"
assert_eq "fsyncs of info.tmp (the dir's making, the commit)" 2 "$(count fsync info.tmp)"
echo "ok: EIO from the journal's disk never lets a call run unjournaled"
