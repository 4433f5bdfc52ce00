#!/bin/bash
# grammar_test.sh — issue 17 through the binary: the default workspace (git
# top, .txguard.yaml, cwd) and the too-wide refusal; one grammar (options
# before subcommands, "did you mean", exit 2 for usage errors); the output
# rules (one line per denial, no summary when nothing happened, -q never
# hides a denial); nested txguard; status; ids by prefix and suffix.
# Nothing destructive: every target is in this test's temp dir.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
"$TXGUARD" doctor >/dev/null 2>&1 || skip "txguard doctor: this kernel forbids what txguard needs"
export TXGUARD_STATE_DIR="$TG_TMP/state"
code() { rc=0; "$@" || rc=$?; echo "$rc"; }
# codeo FILE CMD...: code, with CMD's stdout in FILE.
codeo() { local f=$1; shift; rc=0; "$@" >"$f" || rc=$?; echo "$rc"; }
P=(--no-default-policy -p "$TXGUARD_SOURCE_DIR/policy.d/20-git.yaml")

# --- the workspace: the top of the git work tree, the command in cwd -------------
repo="$TG_TMP/app"
mkdir -p "$repo/src" "$repo/.git"
echo old >"$repo/README.md"
(cd "$repo/src" && "$TXGUARD" "${P[@]}" --report "$TG_TMP/r1.json" -- sh -c 'pwd > where; echo new > ../README.md') 2>"$TG_TMP/r1.err" ||
	fail "a run in app/src could not change app/README.md: $(cat "$TG_TMP/r1.err")"
assert_eq "the command ran in the current directory" "$repo/src" "$(cat "$repo/src/where")"
assert_eq "README changed" new "$(cat "$repo/README.md")"
field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
assert_eq "report: workspace" "$repo" "$(field "$TG_TMP/r1.json" 'r["workspace"]')"
assert_eq "report: how" git "$(field "$TG_TMP/r1.json" 'r["workspace_source"]')"
# ... and a failure in src restores the whole project.
assert_eq "failure exit" 3 "$(cd "$repo/src" && code "$TXGUARD" "${P[@]}" -q -- sh -c 'rm ../README.md; exit 3')"
assert_eq "README restored" new "$(cat "$repo/README.md")"
# A worktree's .git is a file; the nearest .txguard.yaml wins over an outer .git.
mkdir -p "$repo/sub/deep" && printf 'version: 1\n' >"$repo/sub/.txguard.yaml"
(cd "$repo/sub/deep" && "$TXGUARD" "${P[@]}" --report "$TG_TMP/r2.json" -- true) || fail "run in sub/deep"
assert_eq "policy file: workspace" "$repo/sub" "$(field "$TG_TMP/r2.json" 'r["workspace"]')"
assert_eq "policy file: how" policy_file "$(field "$TG_TMP/r2.json" 'r["workspace_source"]')"
mkdir -p "$TG_TMP/wt/x" && echo 'gitdir: /nowhere' >"$TG_TMP/wt/.git"
(cd "$TG_TMP/wt/x" && "$TXGUARD" "${P[@]}" --report "$TG_TMP/r3.json" -- true) || fail "run in a worktree"
assert_eq "worktree: workspace" "$TG_TMP/wt" "$(field "$TG_TMP/r3.json" 'r["workspace"]')"
mkdir -p "$TG_TMP/plain"
(cd "$TG_TMP/plain" && "$TXGUARD" "${P[@]}" --report "$TG_TMP/r4.json" -- true) || fail "run in a plain dir"
assert_eq "no marker: cwd" "$TG_TMP/plain cwd" \
	"$(field "$TG_TMP/r4.json" 'r["workspace"] + " " + r["workspace_source"]')"
(cd "$TG_TMP/plain" && "$TXGUARD" "${P[@]}" -w "$repo" --report "$TG_TMP/r5.json" -- true) || fail "-w"
assert_eq "-w: how" option "$(field "$TG_TMP/r5.json" 'r["workspace_source"]')"
# A discovered root that is too wide (a dotfiles repository in $HOME) is passed over.
mkdir -p "$TG_TMP/home/.git" "$TG_TMP/home/proj"
(cd "$TG_TMP/home/proj" && HOME="$TG_TMP/home" "$TXGUARD" "${P[@]}" --report "$TG_TMP/r6.json" -- true) ||
	fail "run under a \$HOME that is a git repository"
assert_eq "dotfiles repo passed over" "$TG_TMP/home/proj cwd" \
	"$(field "$TG_TMP/r6.json" 'r["workspace"] + " " + r["workspace_source"]')"

# --- too-wide workspaces are refused with the reason, unless forced ---------------
for wide in / "$TG_TMP/home"; do
	rc=0
	HOME="$TG_TMP/home" "$TXGUARD" "${P[@]}" -w "$wide" --report "$TG_TMP/wide.json" -- true 2>"$TG_TMP/wide.err" || rc=$?
	assert_eq "-w $wide: exit" 125 "$rc"
	grep -q "^txguard: refusing workspace .*--force-workspace" "$TG_TMP/wide.err" || fail "-w $wide: $(cat "$TG_TMP/wide.err")"
	assert_eq "-w $wide: one line" 1 "$(wc -l <"$TG_TMP/wide.err")"
	assert_eq "-w $wide: report" setup_failed "$(field "$TG_TMP/wide.json" 'r["outcome"]')"
done
HOME="$TG_TMP/home" "$TXGUARD" "${P[@]}" -q --force-workspace -w "$TG_TMP/home" -- true ||
	fail "--force-workspace does not force"
echo data >"$TG_TMP/afile"
assert_eq "-w FILE" 125 "$(code "$TXGUARD" -w "$TG_TMP/afile" -- true 2>"$TG_TMP/wf.err")"
assert_eq "-w FILE says so" "txguard: workspace $TG_TMP/afile is not a directory: give -w a directory" "$(cat "$TG_TMP/wf.err")"

# --- one grammar -------------------------------------------------------------------
cd "$TG_TMP/plain" || fail "cd"
assert_eq "bare word: exit 2" 2 "$(code "$TXGUARD" ls -l 2>"$TG_TMP/g.err")"
assert_eq "bare word: did you mean" "txguard: 'ls' is not a subcommand; did you mean 'txguard -- ls ...'? (commands go after '--')" "$(cat "$TG_TMP/g.err")"
# A run that changes nothing leaves no history entry: give log one to show.
"$TXGUARD" -q "${P[@]}" -- sh -c 'echo x >logged' || fail "a run that writes in plain"
assert_eq "-q log runs log" 0 "$(codeo "$TG_TMP/g.out" "$TXGUARD" -q log)"
grep -q '^ID ' "$TG_TMP/g.out" || fail "-q log printed: $(cat "$TG_TMP/g.out")"
assert_eq "unknown help topic: exit 2" 2 "$(code "$TXGUARD" help nosuch 2>"$TG_TMP/g.err")"
grep -q "no help topic 'nosuch'" "$TG_TMP/g.err" || fail "help nosuch: $(cat "$TG_TMP/g.err")"
assert_eq "help status" 0 "$(codeo /dev/null "$TXGUARD" help status)"
assert_eq "unknown option: exit 2" 2 "$(code "$TXGUARD" --nosuch -- true 2>"$TG_TMP/g.err")"
assert_eq "unknown option: one line" 1 "$(wc -l <"$TG_TMP/g.err")"

# --- output: a denial is one line; the summary only when something happened -------
rc=0
"$TXGUARD" "${P[@]}" -- git push --force origin main 2>"$TG_TMP/o.err" || rc=$?
assert_eq "denied push: exit" 126 "$rc"
assert_eq "denied push: one line" 1 "$(wc -l <"$TG_TMP/o.err")"
grep -q '^txguard: denied exec `git push --force origin main` by rule git-push-force' "$TG_TMP/o.err" ||
	fail "denied push: $(cat "$TG_TMP/o.err")"
"$TXGUARD" "${P[@]}" -q -- git push --force origin main 2>"$TG_TMP/o.err" || true
assert_eq "-q keeps the denial" 1 "$(grep -c '^txguard: denied exec' "$TG_TMP/o.err")"
"$TXGUARD" "${P[@]}" -- true 2>"$TG_TMP/o.err"
assert_eq "nothing changed: silent" "" "$(cat "$TG_TMP/o.err")"
"$TXGUARD" "${P[@]}" -- grep -q nothing /dev/null 2>"$TG_TMP/o.err" || true
assert_eq "grep without a match: silent" "" "$(cat "$TG_TMP/o.err")"
"$TXGUARD" "${P[@]}" -v -- sh -c 'exit 4' 2>"$TG_TMP/o.err" || true
assert_eq "-v: nothing to roll back" "txguard: exit 4, nothing to roll back" "$(cat "$TG_TMP/o.err")"
"$TXGUARD" "${P[@]}" -- sh -c 'echo x > made' 2>"$TG_TMP/o.err"
grep -q '^txguard: committed 1 path in ' "$TG_TMP/o.err" || fail "a change has its summary: $(cat "$TG_TMP/o.err")"
"$TXGUARD" "${P[@]}" -- /nonexistent/cmd 2>"$TG_TMP/o.err" || true
assert_eq "not found: one line" "txguard: /nonexistent/cmd: No such file or directory (not found: check the name and \$PATH)" "$(cat "$TG_TMP/o.err")"

# --- ids: any unique prefix, or the random suffix ----------------------------------
id=$("$TXGUARD" log --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
suffix=${id##*-}
assert_eq "show by suffix" 0 "$(codeo "$TG_TMP/s.out" "$TXGUARD" show "$suffix")"
grep -q "^run $id" "$TG_TMP/s.out" || fail "show $suffix: $(cat "$TG_TMP/s.out")"
# A prefix of the suffix matches too, unless another id has it as well.
n=$("$TXGUARD" log --json | python3 -c 'import json,sys; s=sys.argv[1]; print(sum(e["id"].startswith(s) or e["id"].rsplit("-",1)[1].startswith(s) for e in json.load(sys.stdin)))' "${suffix:0:3}")
if [ "$n" = 1 ]; then want=0; else want=1; fi
assert_eq "show by prefix of the suffix" "$want" "$(codeo /dev/null "$TXGUARD" show "${suffix:0:3}" 2>/dev/null)"
assert_eq "show by id prefix" 0 "$(codeo /dev/null "$TXGUARD" show "${id:0:22}")"
assert_eq "no such id" 1 "$(code "$TXGUARD" show zzzzzz 2>/dev/null)"

# --- status: open transactions and an interrupted run ------------------------------
tx=$("$TXGUARD" begin) || fail "begin"
"$TXGUARD" "${P[@]}" -q --tx "$tx" -- sh -c 'echo 1 > t1'
"$TXGUARD" status >"$TG_TMP/st.out" || fail "status"
grep -q "^workspace: $TG_TMP/plain (cwd)" "$TG_TMP/st.out" || fail "status: $(cat "$TG_TMP/st.out")"
grep -q "^open transaction $tx: .*1 run(s)" "$TG_TMP/st.out" || fail "status lists $tx: $(cat "$TG_TMP/st.out")"
"$TXGUARD" -q commit "$tx"
# A txguard killed mid-run leaves its journal open: status names it.
"$TXGUARD" "${P[@]}" -q -- sh -c 'echo y > crash; sleep 30' &
tgpid=$!
for _ in $(seq 100); do [ -e crash ] && break; sleep 0.1; done
kill -KILL "$tgpid"; wait "$tgpid" 2>/dev/null || true
"$TXGUARD" status --json >"$TG_TMP/st.json"
assert_eq "status: no open tx" 0 "$(field "$TG_TMP/st.json" 'len(r["transactions"])')"
assert_eq "status: interrupted run" interrupted "$(field "$TG_TMP/st.json" 'r["runs"][0]["state"]')"
"$TXGUARD" -q recover
"$TXGUARD" status --json >"$TG_TMP/st.json"
assert_eq "status after recover" 0 "$(field "$TG_TMP/st.json" 'len(r["runs"])')"
[ ! -e crash ] || fail "recover left the crashed run's file"

# --- txguard under txguard ----------------------------------------------------------
rc=0
"$TXGUARD" "${P[@]}" -- "$TXGUARD" "${P[@]}" -- true 2>"$TG_TMP/n.err" || rc=$?
assert_eq "nested: exit" 125 "$rc"
grep -q "^txguard: already running under txguard (pid [0-9]*)" "$TG_TMP/n.err" || fail "nested: $(cat "$TG_TMP/n.err")"
grep -q "cap-add" "$TG_TMP/n.err" && fail "nested: the container hint again: $(cat "$TG_TMP/n.err")"
echo "grammar: ok"
