#!/bin/sh
# tx.sh — multi-command transactions across a dozen commands: one that
# commits (members stay in history), one rolled back as a whole (the tree
# is as at `begin`), a failing member that rolls back only itself, a
# member undone as a savepoint, and --tx-failure all.
. "$(dirname "$0")/lib.sh"
require_runs

printf 'v0\n' >"$ws/file"
mkdir "$ws/dir"

# --- commit ---
tx=$(h begin) || fail "begin"
case "$tx" in tx-????????) ;; *) fail "begin printed '$tx'" ;; esac
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
	tg --tx "$tx" -- sh -c "echo $i >> file; echo $i > dir/f$i" || fail "member $i"
done
assert_eq "twelve members in the log" 12 "$(h log --json | python3 -c '
import json, sys; print(sum(1 for e in json.load(sys.stdin) if e["tx"] == sys.argv[1]))' "$tx")"
h log | grep -q "\[tx $tx\]" || fail "the human log does not show the transaction"
h commit "$tx" >/dev/null || fail "commit"
assert_eq "commit twice" 1 "$(code h commit "$tx" 2>/dev/null)"
assert_eq "rollback after commit" 1 "$(code h rollback "$tx" 2>/dev/null)"
assert_eq "joining a committed tx fails" 125 "$(code tg --tx "$tx" -- touch nope 2>/dev/null)"
[ ! -e "$ws/nope" ] || fail "a run joined a committed transaction"
assert_eq "commit kept the effects" 13 "$(wc -l <"$ws/file")"
assert_eq "members stay in history" 12 "$(ids | wc -l)"
assert_eq "unknown tx" 1 "$(code h commit no-such-tx 2>/dev/null)"
assert_eq "joining an unknown tx fails" 125 "$(code tg --tx no-such-tx -- touch nope 2>/dev/null)"

# --- rollback, with a failing member (self) and a savepoint undo ---
at_begin=$(snapshot "$ws")
tx2=$(h begin --tx task-2) || fail "begin --tx NAME"
assert_eq "begin --tx NAME prints it" task-2 "$tx2"
assert_eq "begin of an existing name" 1 "$(code h begin --tx task-2 2>/dev/null)"
for i in 1 2 3 4 5 6; do
	tg --tx task-2 -- sh -c "echo r$i >> file; mkdir -p new/d$i; echo $i > new/d$i/x; rm -f dir/f$i" ||
		fail "member r$i"
done
rc=0; tg --tx task-2 -- sh -c 'echo bad >> file; rm -rf dir; exit 3' || rc=$?
assert_eq "failing member exit" 3 "$rc"
[ -e "$ws/dir/f12" ] || fail "the failing member was not rolled back"
tg --tx task-2 -- sh -c 'echo r7 >> file' || fail "after the failure the tx goes on"
savepoint=$(snapshot "$ws")
for i in 8 9 10 11 12; do
	tg --tx task-2 -- sh -c "echo r$i >> file; touch s$i" || fail "member r$i"
done
# undo of the 8th member = back to the savepoint before it (newer members first)
m8=$(h log --json | python3 -c '
import json, sys
m = [e["id"] for e in json.load(sys.stdin) if e["tx"] == "task-2" and e["outcome"] == "committed"]
print(m[4])')
h undo "$m8" >"$TG_TMP/out" || fail "savepoint undo"
assert_eq "savepoint undo: 5 runs" 5 "$(grep -c '^undone:' "$TG_TMP/out")"
assert_tree "back at the savepoint" "$savepoint"
tg --tx task-2 -- sh -c 'echo after-savepoint >> file' || fail "member after savepoint"
h rollback task-2 >"$TG_TMP/out" || fail "rollback: $(cat "$TG_TMP/out")"
assert_tree "rollback: the tree as at begin" "$at_begin"
assert_eq "rollback twice" 1 "$(code h rollback task-2 2>/dev/null)"
assert_eq "joining a rolled-back tx fails" 125 "$(code tg --tx task-2 -- true 2>/dev/null)"

# --- --tx-failure all: a failing member abandons the whole transaction ---
tx3=$(h begin) || fail "begin 3"
tg --tx "$tx3" -- sh -c 'echo a1 >> file' || fail "a1"
tg --tx "$tx3" -- sh -c 'touch made-by-a2' || fail "a2"
rc=0; tg --tx "$tx3" --tx-failure all -- sh -c 'echo a3 >> file; exit 1' || rc=$?
assert_eq "failing member exit" 1 "$rc"
assert_tree "--tx-failure all: the tree as at begin" "$at_begin"
assert_eq "the tx is aborted" 125 "$(code tg --tx "$tx3" -- true 2>/dev/null)"

# --- abandoning is refused when a member's path was changed by hand ---
before4=$(snapshot "$ws")
tx4=$(h begin) || fail "begin 4"
tg --tx "$tx4" -- sh -c 'echo m1 > handed' || fail "m1"
printf 'by hand\n' >"$ws/handed"
rc=0; tg --tx "$tx4" --tx-failure all -- sh -c 'touch m2; exit 4' || rc=$?
assert_eq "failing member exit" 4 "$rc"
[ ! -e "$ws/m2" ] || fail "the failing member was not rolled back"
assert_eq "the hand edit is kept" "by hand" "$(cat "$ws/handed")"
tg --tx "$tx4" -- true || fail "the transaction did not stay open"
rc=0; h rollback "$tx4" >/dev/null 2>"$TG_TMP/err" || rc=$?
assert_eq "rollback refused" 1 "$rc"
grep -q "^  handed  " "$TG_TMP/err" || fail "the rollback does not name the path: $(cat "$TG_TMP/err")"
h rollback --force "$tx4" >/dev/null 2>&1 || fail "rollback --force"
assert_tree "rollback --force: as at begin" "$before4"

# --- the default state dir (no TXGUARD_STATE_DIR): begin creates it ---
tx5=$(env -u TXGUARD_STATE_DIR "$TXGUARD" begin -w "$ws") || fail "begin with the default state dir"
(unset TXGUARD_STATE_DIR; tg --tx "$tx5" -- touch def) || fail "joining with the default state dir"
(unset TXGUARD_STATE_DIR; h rollback "$tx5" >/dev/null) || fail "rollback with the default state dir"
[ ! -e "$ws/def" ] || fail "rollback with the default state dir left def"
