#!/bin/sh
# undo_git.sh — real git: `git reset --hard` and `git clean -fdx` succeed
# under txguard and are undone exactly (work tree, index and .git).
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || skip "git is not installed"
require_runs

cd "$ws"
git init -q .
printf 'v1\n' >tracked.txt
printf 'ignored/\n*.o\n' >.gitignore
git add . && git commit -qm one
printf 'v2 work in progress\n' >tracked.txt     # uncommitted edit
printf 'new\n' >untracked.txt                   # untracked
mkdir -p ignored/deep && printf 'cache\n' >ignored/deep/c && printf 'obj' >x.o
git add tracked.txt 2>/dev/null || true
printf 'v3 not staged\n' >tracked.txt
cd /
before=$(snapshot "$ws")

# git reset --hard: the index and the tracked file go back to HEAD
assert_eq "git reset --hard" 0 "$(code tg -- git -C "$ws" reset -q --hard)"
assert_eq "reset happened" v1 "$(cat "$ws/tracked.txt")"
h undo >/dev/null || fail "undo of git reset --hard failed"
assert_tree "after undo of git reset --hard" "$before"
assert_eq "git sees the staged change again" "M" "$(git --no-optional-locks -C "$ws" status --porcelain tracked.txt | cut -c1)"

# git clean -fdx: untracked and ignored files, whole directories
assert_eq "git clean -fdx" 0 "$(code tg -- git -C "$ws" clean -q -fdx)"
[ ! -e "$ws/ignored" ] && [ ! -e "$ws/untracked.txt" ] && [ ! -e "$ws/x.o" ] ||
	fail "git clean -fdx did not clean"
h undo >/dev/null || fail "undo of git clean -fdx failed"
assert_tree "after undo of git clean -fdx" "$before"

# both at once: reset then clean, undo the older one (undoes both)
tg -- git -C "$ws" reset -q --hard || fail "reset"
tg -- git -C "$ws" clean -q -fdx || fail "clean"
old=$(ids | sed -n 2p)
show_agrees "$old"
show_agrees "$(ids | sed -n 1p)"
h undo "$old" >"$TG_TMP/out" || fail "undo of two git runs failed"
assert_eq "two runs undone" 2 "$(grep -c '^undone:' "$TG_TMP/out")"
assert_tree "after undo of reset + clean" "$before"
git -C "$ws" fsck 2>"$TG_TMP/fsck" || fail "git fsck fails after undo: $(cat "$TG_TMP/fsck")"
