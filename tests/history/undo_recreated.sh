#!/bin/sh
# undo_recreated.sh — a directory made by an older run and removed by a
# newer one: undoing the older run undoes the newer first, which recreates
# the directory (a new inode), then must still remove it. The same with a
# directory renamed away and back.
. "$(dirname "$0")/lib.sh"
require_runs

before=$(snapshot "$ws")
tg -- sh -c 'mkdir d; mkdir -p e/f' || fail "run 1"
tg -- sh -c 'rmdir d; rmdir e/f' || fail "run 2"
h undo "$(ids | sed -n 2p)" >"$TG_TMP/out" 2>"$TG_TMP/err" || fail "undo: $(cat "$TG_TMP/err")"
assert_eq "two runs undone" 2 "$(grep -c '^undone:' "$TG_TMP/out")"
assert_tree "the directories made by run 1 are gone" "$before"
