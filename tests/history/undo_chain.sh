#!/bin/sh
# undo_chain.sh — undo of the third-newest run undoes the two newer runs
# first, newest first, and leaves the older runs' effects in place.
. "$(dirname "$0")/lib.sh"
require_runs

printf 'base\n' >"$ws/a"
tg -- sh -c 'echo one >> a; touch r1' || fail "run 1"
s1=$(snapshot "$ws")
tg -- sh -c 'echo two >> a; mkdir d; echo x > d/x' || fail "run 2"
tg -- sh -c 'mv a b; rm d/x' || fail "run 3"
tg -- sh -c 'echo four > b; chmod 600 b; ln -s b c' || fail "run 4"
assert_eq "four runs" 4 "$(ids | wc -l)"
r4=$(ids | sed -n 1p); r3=$(ids | sed -n 2p); r2=$(ids | sed -n 3p); r1=$(ids | sed -n 4p)

# show: a rename, deletions, a modification with a mode change
h show "$r3" >"$TG_TMP/show3" || fail "show r3"
grep -q "renamed *a -> b$" "$TG_TMP/show3" || fail "show: no rename a -> b: $(cat "$TG_TMP/show3")"
grep -q "deleted *d/x$" "$TG_TMP/show3" || fail "show: d/x not deleted: $(cat "$TG_TMP/show3")"
[ "$(wc -l <"$TG_TMP/show3")" -eq 5 ] || fail "show: more than the 2 changes: $(cat "$TG_TMP/show3")"
h show "$r4" >"$TG_TMP/show4" || fail "show r4"
grep -q "modified *b$" "$TG_TMP/show4" || fail "show: b not modified: $(cat "$TG_TMP/show4")"
grep -q "created *c$" "$TG_TMP/show4" || fail "show: symlink c not created: $(cat "$TG_TMP/show4")"
# diff: the pre-image of b before run 4 against b now
h diff "$r4" b >"$TG_TMP/diff4" || fail "diff r4 b"
assert_eq "diff of b" "--- a/b
+++ b/b
@@ -1,3 +1 @@
-base
-one
-two
+four" "$(cat "$TG_TMP/diff4")"
# diff of the whole run includes the created symlink
h diff "$r4" >"$TG_TMP/diff4all" || fail "diff r4"
grep -q "^created c" "$TG_TMP/diff4all" || fail "diff of the run lacks c: $(cat "$TG_TMP/diff4all")"
assert_eq "diff of a path the run did not change" 1 "$(code h diff "$r4" nothere 2>/dev/null)"

h undo "$r2" >"$TG_TMP/out" || fail "undo of the third-newest failed: $(cat "$TG_TMP/out")"
assert_eq "undo order" "undone: $r4
undone: $r3
undone: $r2" "$(cat "$TG_TMP/out")"
assert_tree "tree as after run 1" "$s1"
for r in "$r4" "$r3" "$r2"; do
	assert_eq "run $r undone" undone "$(field "$r" outcome)"
done
assert_eq "run 1 stays" committed "$(field "$r1" outcome)"

# the default undo now takes the newest run not undone: run 1
h undo >/dev/null || fail "undo of run 1"
assert_eq "a is back to base" base "$(cat "$ws/a")"
[ ! -e "$ws/r1" ] || fail "r1 still there"

# the prefix of an id works (>= 4 characters)
tg -- touch p || fail "run p"
p=$(ids | sed -n 1p)
h show "${p%?}" | grep -q "created *p$" || fail "show by id prefix"
assert_eq "an ambiguous prefix" 1 "$(code h show "$(printf %s "$p" | cut -c1-8)" 2>/dev/null)"

# diff of a binary file modified in place: sizes and SHA-256 of both sides
printf '\000\001\002' >"$ws/bin"
tg -- sh -c 'printf "\000\377" > bin' || fail "binary run"
b=$(ids | sed -n 1p)
h diff "$b" bin >"$TG_TMP/diffb" || fail "diff of a binary file"
grep -q "^Binary file bin differs" "$TG_TMP/diffb" || fail "no binary line: $(cat "$TG_TMP/diffb")"
grep -q "before: 3 bytes, sha256 $(printf '\000\001\002' | sha256sum | cut -d' ' -f1)" "$TG_TMP/diffb" ||
	fail "pre-image size/hash: $(cat "$TG_TMP/diffb")"
grep -q "now:    2 bytes, sha256 $(printf '\000\377' | sha256sum | cut -d' ' -f1)" "$TG_TMP/diffb" ||
	fail "current size/hash: $(cat "$TG_TMP/diffb")"
