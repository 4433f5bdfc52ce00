#!/bin/sh
# undo_rm.sh — `rm -rf src` succeeds (committed); log, show and diff describe
# it; `txguard undo` gives the tree back exactly; the run is marked undone.
. "$(dirname "$0")/lib.sh"
require_runs

mkdir -p "$ws/src/lib" "$ws/src/empty"
printf 'int main(void) { return 0; }\n' >"$ws/src/main.c"
printf 'line 1\nline 2\n' >"$ws/src/lib/util.c"
printf '\000\001binary\377' >"$ws/src/lib/blob.bin"
ln -s main.c "$ws/src/link"
ln "$ws/src/main.c" "$ws/src/hard"
chmod 751 "$ws/src/lib"
printf 'keep\n' >"$ws/README"
before=$(snapshot "$ws")

assert_eq "rm -rf src exits 0" 0 "$(code tg -- rm -rf src)"
[ ! -e "$ws/src" ] || fail "rm -rf src did not run"

# log: one committed run, newest first, with its counts
id=$(ids)
[ -n "$id" ] || fail "log lists no run"
assert_eq "one run" 1 "$(ids | wc -l)"
assert_eq "outcome" committed "$(field "$id" outcome)"
assert_eq "command" "rm -rf src" "$(field "$id" command)"
assert_eq "deleted count" 8 "$(field "$id" counts.deleted)"
h log | grep -q "rm -rf src" || fail "human log lacks the command"

# show: path by path
h show "$id" >"$TG_TMP/show" || fail "show failed"
for p in src src/main.c src/lib/util.c src/lib/blob.bin src/link src/empty; do
	grep -q "deleted *$p\$" "$TG_TMP/show" || fail "show does not list $p as deleted: $(cat "$TG_TMP/show")"
done
h show --json "$id" | python3 -c '
import json, sys
s = json.load(sys.stdin)
kinds = {c["path"]: c["kind"] for c in s["changes"]}
assert kinds["src/main.c"] == "deleted", kinds
assert s["outcome"] == "committed"' || fail "show --json"

# diff of a deleted text file: the whole pre-image as removed lines
h diff "$id" src/lib/util.c >"$TG_TMP/diff" || fail "diff failed"
grep -q '^--- a/src/lib/util.c' "$TG_TMP/diff" || fail "diff header: $(cat "$TG_TMP/diff")"
grep -q '^-line 2' "$TG_TMP/diff" || fail "diff body: $(cat "$TG_TMP/diff")"
# a binary one: sizes and SHA-256
h diff "$id" src/lib/blob.bin >"$TG_TMP/diffb" || fail "binary diff failed"
sum=$(printf '\000\001binary\377' | sha256sum | cut -d' ' -f1)
grep -q "$sum" "$TG_TMP/diffb" || fail "binary diff lacks the pre-image hash: $(cat "$TG_TMP/diffb")"

# undo, after a run that changed nothing: that run took no history slot,
# so a bare undo undoes the rm -rf
tg -- ls >/dev/null || fail "ls"
assert_eq "runs in the history" 1 "$(ids | wc -l)"
h undo >"$TG_TMP/undo" || fail "undo failed: $(cat "$TG_TMP/undo")"
grep -q "undone: $id" "$TG_TMP/undo" || fail "undo did not name the run"
assert_eq "rm -rf undone" 1 "$(grep -c '^undone:' "$TG_TMP/undo")"
assert_tree "after undo" "$before"
assert_eq "marked undone" undone "$(field "$id" outcome)"
assert_eq "undo again: nothing to undo" 1 "$(code h undo 2>/dev/null)"
assert_eq "undo of an undone run" 1 "$(code h undo "$id" 2>/dev/null)"
assert_tree "a refused undo changes nothing" "$before"
assert_eq "unknown id" 1 "$(code h show no-such-run 2>/dev/null)"
