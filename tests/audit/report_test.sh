#!/bin/bash
# report_test.sh — run real commands through txguard and check the --report
# and --log output against the schemas AND against what happened: outcome,
# exit status, denied rule ids, changed paths, the stderr denial line, the
# timeout of a sleeping tree (killed whole, its change rolled back).
. "$(dirname "$0")/../lib/common.sh"
POLICY=$TXGUARD_SOURCE_DIR/tests/audit/audit-policy.yaml
VALIDATE=$TXGUARD_SOURCE_DIR/tests/audit/validate.py
PY=/usr/bin/python3
"$PY" -c 'import jsonschema' 2>/dev/null || PY=python3
tg_tmpdir
WS=$TG_TMP/ws
OUT=$TG_TMP/out
mkdir -p "$WS/protected" "$OUT"

if ! "$TXGUARD" --no-default-policy -w "$WS" -q -- true 2>"$OUT/probe.err"; then
	tg_cannot_run "$OUT/probe.err"
fi

# field FILE EXPR: a Python expression over the parsed report `r`.
field() {
	"$PY" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# events FILE: the event names of a log, space-separated.
events() {
	"$PY" -c 'import json, sys; print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1])))' "$1"
}
validate() {
	"$PY" "$VALIDATE" "$@" >/dev/null || fail "schema validation failed for $*"
}
# tg NAME [txguard options] -- CMD...: run in the workspace, keep report,
# log and stderr under $OUT/NAME.*; sets $rc.
tg() {
	local name=$1
	shift
	set +e
	(cd "$WS" && "$TXGUARD" --no-default-policy -p "$POLICY" \
		--report "$OUT/$name.json" --log "$OUT/$name.jsonl" "$@") 2>"$OUT/$name.err"
	rc=$?
	set -e
	[ -s "$OUT/$name.json" ] || fail "$name: no report: $(cat "$OUT/$name.err")"
}

# Plain binaries, not #! scripts: the test is about the report, not about
# interpreters.
cp /bin/true "$WS/forbidden-tool"
cp /bin/true "$WS/fatal-tool"
echo keep >"$WS/existing.txt"
echo gone >"$WS/gone.txt"
echo old >"$WS/old.txt"

# --- 1. a committed run: every kind of change, one audited write --------------
tg commit -- sh -c 'echo new > created.txt; echo more >> existing.txt; rm gone.txt;
	mv old.txt new.txt; mkdir d; echo w > watched.txt'
assert_eq "commit: exit" 0 "$rc"
assert_eq "commit: outcome" committed "$(field "$OUT/commit.json" 'r["outcome"]')"
assert_eq "commit: end_reason" exited "$(field "$OUT/commit.json" 'r["end_reason"]')"
assert_eq "commit: exit object" "0 0 None" "$(field "$OUT/commit.json" 'r["exit"]["status"], r["exit"]["code"], r["exit"]["signal"]' | tr -d '(),')"
assert_eq "commit: created" "['created.txt', 'd', 'watched.txt']" "$(field "$OUT/commit.json" 'sorted(r["changes"]["created"])')"
assert_eq "commit: modified" "['existing.txt']" "$(field "$OUT/commit.json" 'r["changes"]["modified"]')"
assert_eq "commit: deleted" "['gone.txt']" "$(field "$OUT/commit.json" 'r["changes"]["deleted"]')"
assert_eq "commit: renamed" "[{'from': 'old.txt', 'to': 'new.txt'}]" "$(field "$OUT/commit.json" 'r["changes"]["renamed"]')"
assert_eq "commit: total" 6 "$(field "$OUT/commit.json" 'r["changes"]["total"]')"
assert_eq "commit: audited rule" "[('audit-test-watched', 'audit', True)]" \
	"$(field "$OUT/commit.json" '[(d["rule"], d["action"], d["enforced"]) for d in r["decisions"]]')"
assert_eq "commit: workspace" "$(cd "$WS" && pwd -P)" "$(field "$OUT/commit.json" 'r["workspace"]')"
assert_eq "commit: command" "sh" "$(field "$OUT/commit.json" 'r["command"][0]')"
assert_eq "commit: policy file" "True" "$(field "$OUT/commit.json" 'any(p.endswith("audit-policy.yaml") for p in r["policy_files"])')"
[ -n "$(field "$OUT/commit.json" 'r["transaction_id"] or ""')" ] || fail "commit: no transaction id"
assert_eq "commit: workspace really changed" "new" "$(cat "$WS/created.txt")"
[ ! -e "$WS/gone.txt" ] || fail "commit: gone.txt is back"
assert_eq "commit: log events" "log_start tx_begin decision tx_commit summary" "$(events "$OUT/commit.jsonl")"
grep -q '^txguard: committed 6 paths in ' "$OUT/commit.err" || fail "commit: no summary line: $(cat "$OUT/commit.err")"

# --- 2. denials, then a failing exit: rolled back --------------------------------
tg deny -- sh -c 'echo x > created2.txt; ./forbidden-tool --now; echo "rc=$?" > exec-rc;
	touch protected/x; exit 3'
assert_eq "deny: exit" 3 "$rc"
assert_eq "deny: outcome" rolled_back "$(field "$OUT/deny.json" 'r["outcome"]')"
assert_eq "deny: exit code" 3 "$(field "$OUT/deny.json" 'r["exit"]["code"]')"
assert_eq "deny: first decision" "audit-test-deny-exec deny EACCES ['./forbidden-tool', '--now']" \
	"$(field "$OUT/deny.json" '" ".join([r["decisions"][0]["rule"], r["decisions"][0]["action"], r["decisions"][0]["errno"], str(r["decisions"][0]["argv"])])')"
assert_eq "deny: rules" "['audit-test-deny-exec', 'audit-test-protected']" \
	"$(field "$OUT/deny.json" 'sorted(set(d["rule"] for d in r["decisions"]))')"
assert_eq "deny: protected path" "True" \
	"$(field "$OUT/deny.json" 'any(d.get("path", "").endswith("/protected/x") for d in r["decisions"] if d["rule"] == "audit-test-protected")')"
assert_eq "deny: counts" "$(field "$OUT/deny.json" 'len(r["decisions"])')" "$(field "$OUT/deny.json" 'r["decision_counts"]["denied"]')"
[ ! -e "$WS/created2.txt" ] || fail "deny: created2.txt survived the rollback"
[ ! -e "$WS/exec-rc" ] || fail "deny: exec-rc survived the rollback"
[ ! -e "$WS/protected/x" ] || fail "deny: protected/x was created"
grep -qF "txguard: denied exec \`./forbidden-tool --now\` by rule audit-test-deny-exec: the report test's forbidden program" \
	"$OUT/deny.err" || fail "deny: no denial line on stderr: $(cat "$OUT/deny.err")"
grep -q '^txguard: rolled back 2 paths in .* (exit 3)$' "$OUT/deny.err" || fail "deny: summary line: $(cat "$OUT/deny.err")"
assert_eq "deny: log decisions" "$(field "$OUT/deny.json" 'len(r["decisions"])')" \
	"$(grep -c '"event":"decision"' "$OUT/deny.jsonl")"
grep -q '"event":"tx_rollback".*"ok":true' "$OUT/deny.jsonl" || fail "deny: no successful tx_rollback event"

# -q silences the summary line, never a denial: exactly the one denial line.
tg quiet -q -- sh -c './forbidden-tool; touch made; exit 1'
assert_eq "quiet: exit" 1 "$rc"
assert_eq "quiet: only the denial" "1 1" \
	"$(grep -c '^txguard:' "$OUT/quiet.err") $(grep -c '^txguard: denied exec .*audit-test-deny-exec' "$OUT/quiet.err")"
assert_eq "quiet: still reported" audit-test-deny-exec "$(field "$OUT/quiet.json" 'r["decisions"][0]["rule"]')"

# --- 3. audit-only: nothing is denied, everything is reported --------------------
tg auditonly --audit-only -- sh -c 'touch protected/y; ./forbidden-tool'
assert_eq "audit-only: exit" 0 "$rc"
assert_eq "audit-only: outcome" committed "$(field "$OUT/auditonly.json" 'r["outcome"]')"
assert_eq "audit-only: flag" True "$(field "$OUT/auditonly.json" 'r["audit_only"]')"
assert_eq "audit-only: none enforced" "False" "$(field "$OUT/auditonly.json" 'any(d["enforced"] for d in r["decisions"])')"
assert_eq "audit-only: rules" "['audit-test-deny-exec', 'audit-test-protected']" \
	"$(field "$OUT/auditonly.json" 'sorted(set(d["rule"] for d in r["decisions"]))')"
[ -e "$WS/protected/y" ] || fail "audit-only: protected/y was not created"
grep -q "^txguard: would deny " "$OUT/auditonly.err" || fail "audit-only: no 'would deny' line"

# --- 4. a policy kill --------------------------------------------------------------
tg kill -- sh -c 'echo x > k1; ./fatal-tool; echo never > k2'
assert_eq "kill: exit" 137 "$rc"
assert_eq "kill: outcome/end" "rolled_back policy_kill" "$(field "$OUT/kill.json" 'r["outcome"] + " " + r["end_reason"]')"
assert_eq "kill: signal" "9 SIGKILL" "$(field "$OUT/kill.json" 'str(r["exit"]["signal"]) + " " + r["exit"]["signal_name"]')"
assert_eq "kill: decision" "audit-test-kill-exec kill" "$(field "$OUT/kill.json" 'r["decisions"][0]["rule"] + " " + r["decisions"][0]["action"]')"
[ ! -e "$WS/k1" ] && [ ! -e "$WS/k2" ] || fail "kill: k1/k2 left behind"

# --- 5. killed by a signal; not found ------------------------------------------------
tg segv -- sh -c 'echo x > s1; kill -SEGV $$'
assert_eq "segv: exit" 139 "$rc"
assert_eq "segv: end/signal" "signaled SIGSEGV" "$(field "$OUT/segv.json" 'r["end_reason"] + " " + r["exit"]["signal_name"]')"
[ ! -e "$WS/s1" ] || fail "segv: s1 left behind"
tg notfound -- ./no-such-program
assert_eq "notfound: exit" 127 "$rc"
assert_eq "notfound: end" "exec_failed 127" "$(field "$OUT/notfound.json" 'r["end_reason"] + " " + str(r["exit"]["status"])')"

# --- 6. setup failure: nothing runs, the report still comes ---------------------------
set +e
(cd "$WS" && "$TXGUARD" --no-default-policy -p "$TG_TMP/no-such-policy.yaml" \
	--report "$OUT/setup.json" -- touch should-not-exist) 2>"$OUT/setup.err"
rc=$?
set -e
assert_eq "setup: exit" 125 "$rc"
assert_eq "setup: outcome" setup_failed "$(field "$OUT/setup.json" 'r["outcome"]')"
assert_eq "setup: no end" None "$(field "$OUT/setup.json" 'r["end_reason"]')"
[ -n "$(field "$OUT/setup.json" 'r["error"] or ""')" ] || fail "setup: no error text"
[ ! -e "$WS/should-not-exist" ] || fail "setup: the command ran"

# --- 7. log levels --------------------------------------------------------------------
tg lvexec --log-level exec -- sh -c '/bin/echo hi >/dev/null'
grep -q '"event":"exec".*"argv":\["/bin/echo","hi"\]' "$OUT/lvexec.jsonl" || fail "exec level: no exec event for /bin/echo"
grep -q '"event":"process_start"' "$OUT/lvexec.jsonl" || fail "exec level: no process_start"
grep -q '"event":"process_exit"' "$OUT/lvexec.jsonl" || fail "exec level: no process_exit"
if grep -q '"action":"allow"' "$OUT/lvexec.jsonl"; then fail "exec level: allow decisions logged"; fi
tg lvall --log-level all -- sh -c 'echo a > la.txt'
grep -q '"event":"decision".*"path":"[^"]*/la.txt".*"action":"allow"' "$OUT/lvall.jsonl" ||
	fail "all level: the allowed write of la.txt is not logged"
if grep -q '"event":"process_start"' "$OUT/commit.jsonl"; then fail "decisions level: process_start logged"; fi

# --- 8. timeout: the whole sleeping tree dies, its change is rolled back -------------
mark=$((200000 + $$ % 100000))
start=$(date +%s%N)
tg timeout --timeout 1s -- sh -c "echo x > t1; (sleep $mark.25; echo late > t2) & sleep $mark.5"
took_ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "timeout: exit" 143 "$rc"
assert_eq "timeout: outcome/end" "rolled_back timeout" "$(field "$OUT/timeout.json" 'r["outcome"] + " " + r["end_reason"]')"
assert_eq "timeout: created t1 reported" "['t1']" "$(field "$OUT/timeout.json" 'r["changes"]["created"]')"
[ ! -e "$WS/t1" ] || fail "timeout: t1 survived the rollback"
[ "$took_ms" -lt 15000 ] || fail "timeout: took ${took_ms}ms (the tree sleeps for days)"
if pgrep -f "sleep $mark" >/dev/null; then fail "timeout: a sleep of the tree is still alive"; fi
grep -q '"event":"summary".*"end_reason":"timeout"' "$OUT/timeout.jsonl" || fail "timeout: log summary"
grep -q '(timeout)$' "$OUT/timeout.err" || fail "timeout: summary line: $(cat "$OUT/timeout.err")"

# Every report and log above, against the schemas (one run each: loading
# jsonschema is the slow part).
validate report "$OUT"/*.json
validate log "$OUT"/*.jsonl
echo "report test: ok"
