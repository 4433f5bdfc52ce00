#!/bin/sh
# redo.sh CASE — `txguard redo`, the undo of the last undo, through the
# real binary. An undo journals itself; redo restores that journal: the
# tree the run left comes back exactly (tg-treehash: content, mode, owner,
# mtime, xattrs, hard-link groups), and a later undo undoes the run again.
#   exact        undo, redo, undo: each tree exactly as expected; after an
#                undo no inode is shared with the state dir, after a redo
#                the links are those the run itself left (a removed member
#                of a hard-link group is kept by the run's stash)
#   other_fs     the same with the state dir on another filesystem
#   newer_run    a run after the undo: redo refused (1), nothing changed
#   hand_edit    a path edited by hand after the undo: refused (1), named,
#                nothing changed; --force overwrites and names it
#   nothing      no undo to redo: exit 1 and a clear message; a redo
#                already done cannot be done twice
#   dry_run      redo --dry-run lists the steps, changes nothing
#   json         redo --json: {ok, refused, error, entry, redone, conflicts}
#   chain        two undos, two redos, newest first; log shows the undo
#                entries (kind "undo", the runs they undid)
#   interrupted  an undo killed part-way (tg-mutate --die-step): redo
#                waits for recovery (1); the next undo recovers it first
#                (reverted whole), then undoes; redo gives the run back
#   unpriv       the exact case as nobody, with ACLs, user xattrs and a
#                read-only file the undo rewrites
. "$(dirname "$0")/lib.sh"
[ -n "${TG_TREEHASH:-}" ] || skip "tg-treehash not built"
require_runs
case=${1:?usage: redo.sh CASE}

hash() { "$TG_TREEHASH" "$ws"; }

# A tree with every kind of change a run can make: content, mode, xattrs,
# a removed hard-link member, a removed directory, a created tree, a rename.
setup() {
	mkdir -p "$ws/d/e" "$ws/keep"
	printf 'one\n' >"$ws/f"
	printf 'two\n' >"$ws/g"
	ln "$ws/g" "$ws/g2"
	printf 'x\n' >"$ws/d/e/x"
	printf 'moved\n' >"$ws/m"
	touch -d 2020-02-02 "$ws/f" "$ws/d/e/x" "$ws/d"
	setfattr -n user.k -v v1 "$ws/f" 2>/dev/null || true
}

change() {
	tg -- sh -c 'echo more >> f; chmod 640 f; setfattr -n user.k -v v2 f 2>/dev/null
		rm g2; rm -rf d; mkdir -p new/sub; echo n > new/sub/y; ln new/sub/y new/y2
		mv m keep/m; touch -d 2021-01-01 keep/m' || fail "the run failed"
}

# No file of the workspace may share its inode with anything outside it
# (the state dir's stash): its link count equals its names in the tree.
no_outside_links() {
	python3 - "$ws" <<'EOF' || fail "$1: a file of the workspace is linked from outside it"
import collections, os, sys
names = collections.Counter()
nlink = {}
for d, _, files in os.walk(sys.argv[1]):
    for n in files:
        st = os.lstat(os.path.join(d, n))
        names[(st.st_dev, st.st_ino)] += 1
        nlink[(st.st_dev, st.st_ino)] = st.st_nlink
bad = [k for k in names if nlink[k] != names[k]]
sys.exit(1 if bad else 0)
EOF
}

# Link counts of every file: a redo gives the run's own back.
links() { (cd "$ws" && find . -type f -printf '%p %n\n' | sort); }

cycle() {
	setup
	hash >"$TG_TMP/before"
	change
	hash >"$TG_TMP/after"
	links >"$TG_TMP/links.after"
	h undo >"$TG_TMP/out" 2>&1 || fail "undo: $(cat "$TG_TMP/out")"
	hash >"$TG_TMP/undone"
	diff "$TG_TMP/before" "$TG_TMP/undone" >&2 || fail "undo did not restore the tree"
	no_outside_links "after undo"
	h redo >"$TG_TMP/out" 2>&1 || fail "redo: $(cat "$TG_TMP/out")"
	grep -q '^redone: ' "$TG_TMP/out" || fail "redo did not name the run: $(cat "$TG_TMP/out")"
	hash >"$TG_TMP/redone"
	diff "$TG_TMP/after" "$TG_TMP/redone" >&2 || fail "redo did not give the run's tree back exactly"
	links >"$TG_TMP/links.redone"
	diff "$TG_TMP/links.after" "$TG_TMP/links.redone" >&2 || fail "redo left other links than the run did"
	assert_eq "g and new/y2 share an inode again" "$(stat -c %i "$ws/new/sub/y")" "$(stat -c %i "$ws/new/y2")"
	h undo >"$TG_TMP/out" 2>&1 || fail "undo after redo: $(cat "$TG_TMP/out")"
	hash >"$TG_TMP/undone2"
	diff "$TG_TMP/before" "$TG_TMP/undone2" >&2 || fail "undo after redo did not restore the tree"
	no_outside_links "after the second undo"
	assert_eq "g and g2 one group again" "$(stat -c %i "$ws/g")" "$(stat -c %i "$ws/g2")"
	# and once more: redo, the whole way
	h redo >/dev/null 2>&1 || fail "second redo"
	hash >"$TG_TMP/redone2"
	diff "$TG_TMP/after" "$TG_TMP/redone2" >&2 || fail "second redo did not give the run's tree back"
}

case $case in
exact)
	cycle
	;;
other_fs)
	other=
	for d in /dev/shm "${TMPDIR:-/tmp}"; do
		[ -d "$d" ] && [ -w "$d" ] && [ "$(stat -c %d "$d")" != "$(stat -c %d "$ws")" ] && other=$d && break
	done
	[ -n "$other" ] || skip "no writable directory on another filesystem than $ws"
	TXGUARD_STATE_DIR=$(mktemp -d "$other/tg-redo-state.XXXXXX")
	export TXGUARD_STATE_DIR
	# (tg_tmpdir's trap, replaced here, removed $TG_TMP: this one must too)
	trap 'rm -rf "$TXGUARD_STATE_DIR" "$TG_TMP"' EXIT
	cycle
	;;
newer_run)
	setup
	change
	h undo >/dev/null 2>&1 || fail "undo"
	tg -- sh -c 'echo later > later' || fail "the newer run"
	tree=$(snapshot "$ws")
	rc=0; h redo >"$TG_TMP/out" 2>"$TG_TMP/err" || rc=$?
	assert_eq "redo after a newer run" 1 "$rc"
	grep -q "moved on" "$TG_TMP/err" || fail "no 'moved on' message: $(cat "$TG_TMP/err")"
	assert_tree "a refused redo changes nothing" "$tree"
	rc=0; h redo --json >"$TG_TMP/json" 2>/dev/null || rc=$?
	assert_eq "redo --json after a newer run" 1 "$rc"
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ok"] is False and r["error"] == "ENOTEMPTY", r' \
		"$TG_TMP/json" || fail "json of a refused redo"
	# a run that changes nothing leaves no entry: it does not block a redo
	h undo >/dev/null 2>&1 || fail "undo of the newer run"
	tg -- true || fail "an empty run"
	h redo >/dev/null 2>&1 || fail "redo after an empty run"
	[ -e "$ws/later" ] || fail "redo did not bring the newer run back"
	;;
hand_edit)
	setup
	change
	hash >"$TG_TMP/after"
	h undo >/dev/null 2>&1 || fail "undo"
	printf 'by hand\n' >"$ws/f"
	tree=$(snapshot "$ws")
	rc=0; h redo >"$TG_TMP/out" 2>"$TG_TMP/err" || rc=$?
	assert_eq "redo over a hand edit" 1 "$rc"
	grep -q "refused" "$TG_TMP/err" || fail "no refusal message: $(cat "$TG_TMP/err")"
	grep -q "^  f$" "$TG_TMP/err" || fail "the edited path is not named: $(cat "$TG_TMP/err")"
	assert_tree "a refused redo changes nothing" "$tree"
	assert_eq "the run is still undone" undone "$(field "$(ids | sed -n 2p)" outcome)"
	rc=0; h redo --force >"$TG_TMP/out" 2>"$TG_TMP/err" || rc=$?
	assert_eq "redo --force" 0 "$rc"
	grep -q "overwritten: f" "$TG_TMP/err" || fail "--force did not name what it overwrote: $(cat "$TG_TMP/err")"
	hash >"$TG_TMP/redone"
	diff "$TG_TMP/after" "$TG_TMP/redone" >&2 || fail "redo --force did not give the run's tree back"
	;;
nothing)
	rc=0; h redo >"$TG_TMP/out" 2>"$TG_TMP/err" || rc=$?
	assert_eq "redo in an empty history" 1 "$rc"
	grep -q "nothing to redo" "$TG_TMP/err" || fail "no clear message: $(cat "$TG_TMP/err")"
	setup
	change
	rc=0; h redo >/dev/null 2>"$TG_TMP/err" || rc=$?
	assert_eq "redo without an undo" 1 "$rc"
	grep -q "nothing to redo" "$TG_TMP/err" || fail "no clear message: $(cat "$TG_TMP/err")"
	h undo >/dev/null 2>&1 || fail "undo"
	h redo >/dev/null 2>&1 || fail "redo"
	rc=0; h redo >/dev/null 2>"$TG_TMP/err" || rc=$?
	assert_eq "a second redo" 1 "$rc"
	grep -q "nothing to redo" "$TG_TMP/err" || fail "no clear message: $(cat "$TG_TMP/err")"
	rc=0; h redo some-id >/dev/null 2>&1 || rc=$?
	assert_eq "redo takes no id" 2 "$rc"
	;;
dry_run)
	setup
	change
	h undo >/dev/null 2>&1 || fail "undo"
	hash >"$TG_TMP/undone"
	h redo --dry-run >"$TG_TMP/out" 2>&1 || fail "redo --dry-run: $(cat "$TG_TMP/out")"
	grep -q "^would redo" "$TG_TMP/out" || fail "no preview header: $(cat "$TG_TMP/out")"
	grep -q "remove  *g2$" "$TG_TMP/out" || fail "the removal of g2 is not listed: $(cat "$TG_TMP/out")"
	grep -q "rewrite  *f$" "$TG_TMP/out" || fail "the rewrite of f is not listed: $(cat "$TG_TMP/out")"
	h redo --dry-run --json >"$TG_TMP/json" || fail "redo --dry-run --json"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["dry_run"] == "redo" and len(r["runs"]) == 1 and r["steps"] > 0 and r["conflicts"] == 0, r' \
		"$TG_TMP/json" || fail "dry-run json"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/undone" "$TG_TMP/now" >&2 || fail "redo --dry-run changed the tree"
	assert_eq "the run is still undone" undone "$(field "$(ids | sed -n 2p)" outcome)"
	h redo >/dev/null 2>&1 || fail "redo after the dry run"
	;;
json)
	setup
	change
	run=$(ids | sed -n 1p)
	h undo --json >"$TG_TMP/undo.json" || fail "undo --json"
	entry=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entry"])' "$TG_TMP/undo.json")
	[ -n "$entry" ] && [ "$entry" != None ] || fail "undo --json names no entry: $(cat "$TG_TMP/undo.json")"
	h redo --json >"$TG_TMP/redo.json" || fail "redo --json"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
want = {"ok": True, "refused": False, "error": None, "entry": sys.argv[2], "redone": [sys.argv[3]], "conflicts": []}
assert r == want, (r, want)' "$TG_TMP/redo.json" "$entry" "$run" || fail "redo --json: $(cat "$TG_TMP/redo.json")"
	assert_eq "the run is committed again" committed "$(field "$run" outcome)"
	assert_eq "the undo entry is undone" undone "$(field "$entry" outcome)"
	assert_eq "the entry's kind" undo "$(field "$entry" kind)"
	assert_eq "the entry names the run" "$run" "$(field "$entry" undoes)"
	assert_eq "the run's kind" run "$(field "$run" kind)"
	;;
chain)
	setup
	tg -- sh -c 'echo r1 > r1' || fail "run 1"
	tg -- sh -c 'echo r2 > r2; rm f' || fail "run 2"
	hash >"$TG_TMP/h2"
	h undo >/dev/null 2>&1 || fail "undo of run 2"
	hash >"$TG_TMP/h1"
	h undo >/dev/null 2>&1 || fail "undo of run 1 (the undo entry is skipped)"
	[ ! -e "$ws/r1" ] && [ ! -e "$ws/r2" ] && [ -e "$ws/f" ] || fail "the two undos did not undo both runs"
	h redo >/dev/null 2>&1 || fail "redo of the second undo"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/h1" "$TG_TMP/now" >&2 || fail "the first redo did not give run 1's tree back"
	h redo >/dev/null 2>&1 || fail "redo of the first undo"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/h2" "$TG_TMP/now" >&2 || fail "the second redo did not give run 2's tree back"
	rc=0; h undo "$(ids | sed -n 1p)" >/dev/null 2>"$TG_TMP/err" || rc=$?
	assert_eq "undo of an undo entry" 1 "$rc"
	grep -q "redo" "$TG_TMP/err" || fail "no hint to redo: $(cat "$TG_TMP/err")"
	;;
interrupted)
	[ -n "${TG_MUTATE:-}" ] || skip "tg-mutate not built"
	setup
	hash >"$TG_TMP/before"
	change
	hash >"$TG_TMP/after"
	rc=0; "$TG_MUTATE" undo "$ws" "$TXGUARD_STATE_DIR" --journaled --die-step 3 2>/dev/null || rc=$?
	assert_eq "the undo was killed" 137 "$rc"
	rc=0; h redo >/dev/null 2>"$TG_TMP/err" || rc=$?
	assert_eq "redo with an interrupted undo" 1 "$rc"
	grep -q "txguard recover" "$TG_TMP/err" || fail "no hint to recover: $(cat "$TG_TMP/err")"
	h undo >"$TG_TMP/out" 2>"$TG_TMP/err" || fail "undo after the crash: $(cat "$TG_TMP/err")"
	grep -q "restored 1 interrupted" "$TG_TMP/err" || fail "the recovery was not said: $(cat "$TG_TMP/err")"
	grep -q "^undone: " "$TG_TMP/out" || fail "the run was not undone: $(cat "$TG_TMP/out")"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/before" "$TG_TMP/now" >&2 || fail "undo after the recovery of an interrupted undo"
	h redo >/dev/null 2>&1 || fail "redo"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/after" "$TG_TMP/now" >&2 || fail "redo after the recovery of an interrupted undo"
	;;
unpriv)
	[ "$(id -u)" = 0 ] || skip "needs root to become nobody"
	command -v setpriv >/dev/null || skip "needs setpriv(1)"
	command -v setfacl >/dev/null || skip "needs setfacl (package acl)"
	mkdir -p "$TG_TMP/home"
	chmod 755 "$TG_TMP"
	chown 65534:65534 "$TG_TMP/home" "$ws"
	nb() { setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_STATE_HOME HOME="$TG_TMP/home" "$@"; }
	tgn() { (cd "$ws" && nb "$TXGUARD" --no-default-policy -p "$TG_TMP/policy.yaml" -q \
		--state-dir "$TG_TMP/home/st" -w "$ws" "$@"); }
	hn() { sub=$1; shift; nb "$TXGUARD" "$sub" --state-dir "$TG_TMP/home/st" -w "$ws" "$@"; }
	nb sh -c "cd '$ws' && echo x > f && ln f g && echo h > h && mkdir d && echo y > d/y && echo r > ro && chmod 444 ro"
	nb setfacl -m u:1000:r "$ws/h" 2>/dev/null || skip "no ACLs on $TG_TMP"
	nb setfattr -n user.a -v 1 "$ws/h" 2>/dev/null || skip "no user xattrs on $TG_TMP"
	hash >"$TG_TMP/before"
	tgn -- sh -c 'rm g; setfacl -m u:1234:rwx h; setfattr -n user.a -v 2 h; echo more >> h; rm -rf d; mkdir n; echo n > n/n
		chmod 644 ro; echo more >> ro; chmod 444 ro' ||
		fail "the run as nobody"
	hash >"$TG_TMP/after"
	(cd "$ws" && getfacl h) >"$TG_TMP/acl.after"
	hn undo >/dev/null || fail "undo as nobody"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/before" "$TG_TMP/now" >&2 || fail "undo as nobody"
	no_outside_links "undo as nobody"
	hn redo >/dev/null || fail "redo as nobody"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/after" "$TG_TMP/now" >&2 || fail "redo as nobody did not give the run's tree back"
	(cd "$ws" && getfacl h) >"$TG_TMP/acl.now"
	diff "$TG_TMP/acl.after" "$TG_TMP/acl.now" >&2 || fail "redo as nobody: the ACL"
	hn undo >/dev/null || fail "undo after redo as nobody"
	hash >"$TG_TMP/now"
	diff "$TG_TMP/before" "$TG_TMP/now" >&2 || fail "undo after redo as nobody"
	assert_eq "f g one group" "$(stat -c %i "$ws/f")" "$(stat -c %i "$ws/g")"
	;;
*)
	fail "unknown case $case"
	;;
esac
