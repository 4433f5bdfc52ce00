#!/bin/bash
# action_test.sh — the CI action: scripts/ci-action.sh run as action.yml runs
# it (inputs as INPUT_* variables, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY), and
# action.yml itself: every input it declares reaches the script, the step
# fails like the command, the report is uploaded even when it failed.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
"$TXGUARD" doctor >/dev/null 2>&1 || skip "txguard doctor: this kernel forbids what txguard needs"
ACTION=$TXGUARD_SOURCE_DIR/action.yml
SCRIPT=$TXGUARD_SOURCE_DIR/scripts/ci-action.sh
mkdir -p "$TG_TMP/bin" "$TG_TMP/repo/.git" "$TG_TMP/repo/sub"
ln -s "$TXGUARD" "$TG_TMP/bin/txguard"
export PATH="$TG_TMP/bin:$PATH" TXGUARD_STATE_DIR="$TG_TMP/state" RUNNER_TEMP="$TG_TMP"
export TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d"
cd "$TG_TMP/repo" || fail "cd"

# act NAME: run the script's "run" with the INPUT_* set by the caller.
act() {
	local name=$1
	: >"$TG_TMP/$name.out"
	: >"$TG_TMP/$name.summary"
	rc=0
	GITHUB_OUTPUT="$TG_TMP/$name.out" GITHUB_STEP_SUMMARY="$TG_TMP/$name.summary" \
		"$SCRIPT" run >"$TG_TMP/$name.log" 2>&1 || rc=$?
}
output() { sed -n "s/^$2=//p" "$TG_TMP/$1.out"; }

# A passing command: exit 0, committed, the report where asked.
INPUT_COMMAND='echo built > artifact.txt' INPUT_REPORT=out/report.json act pass
assert_eq "pass: exit" 0 "$rc"
assert_eq "pass: outputs" "0 committed $TG_TMP/repo/out/report.json" \
	"$(output pass exit-code) $(output pass outcome) $(output pass report)"
[ -s out/report.json ] || fail "pass: no report"
grep -q 'outcome \*\*committed\*\*' "$TG_TMP/pass.summary" || fail "pass: summary: $(cat "$TG_TMP/pass.summary")"
assert_eq "pass: the file stays" built "$(cat artifact.txt)"

# A failing command in a subdirectory: the step fails with its code, the
# project is rolled back, the annotation says so.
INPUT_COMMAND='echo broken > ../artifact.txt; exit 3' INPUT_WORKING_DIRECTORY=sub INPUT_TIMEOUT=5m act failing
assert_eq "failing: exit" 3 "$rc"
assert_eq "failing: outcome" rolled_back "$(output failing outcome)"
assert_eq "failing: rolled back" built "$(cat artifact.txt)"
grep -q '^::error title=txguard::the command failed (exit 3); its changes were rolled back$' "$TG_TMP/failing.log" ||
	fail "failing: no annotation: $(cat "$TG_TMP/failing.log")"

# A denial: one annotation naming the rule; extra policy and args reach txguard.
printf 'version: 1\nrules:\n  - id: ci-no-curl\n    reason: no downloads in this step\n    action: deny\n    exec:\n      program: [curl]\n' >"$TG_TMP/ci.yaml"
INPUT_COMMAND='curl http://127.0.0.1:9/ || echo refused' INPUT_POLICY="$TG_TMP/ci.yaml" \
	INPUT_ARGS='--strip-secrets --rollback-on never' act deny
assert_eq "deny: exit" 0 "$rc"
grep -q '^::error title=txguard denied::denied exec `curl http://127.0.0.1:9/` by rule ci-no-curl: no downloads in this step$' \
	"$TG_TMP/deny.log" || fail "deny: annotation: $(cat "$TG_TMP/deny.log")"
python3 - "$TG_TMP/repo/txguard-report.json" <<'PY' || fail "deny: report lacks the options"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["rollback_on"] == "never", r["rollback_on"]
assert [d["rule"] for d in r["decisions"]] == ["ci-no-curl"], r["decisions"]
PY

# A timeout: the step fails with 128+15, the report says timeout.
INPUT_COMMAND='sleep 30' INPUT_TIMEOUT=1s act slow
assert_eq "timeout: exit" 143 "$rc"
assert_eq "timeout: end" timeout "$(python3 -c 'import json; print(json.load(open("txguard-report.json"))["end_reason"])')"

# --- action.yml: inputs, steps ---------------------------------------------------------
python3 - "$ACTION" "$SCRIPT" <<'PY' || fail "action.yml does not match scripts/ci-action.sh"
import re, sys
text = open(sys.argv[1]).read()
script = open(sys.argv[2]).read()
try:
    import yaml
    a = yaml.safe_load(text)
    inputs = list(a["inputs"])
    steps = a["runs"]["steps"]
    assert a["runs"]["using"] == "composite"
    upload = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload and upload[0]["if"].startswith("always()"), upload
    env = steps[1]["env"]
except ImportError:
    block = text.split("\ninputs:\n", 1)[1].split("\noutputs:\n", 1)[0]
    inputs = re.findall(r"^  ([a-z-]+):$", block, re.M)
    assert "using: composite" in text and "uses: actions/upload-artifact@" in text
    assert re.search(r"if: always\(\)", text)
    env = dict(re.findall(r"^        (INPUT_[A-Z_]+): \$\{\{ inputs\.([a-z-]+) \}\}$", text, re.M))
for name in inputs:
    if name == "artifact-name":
        continue
    var = "INPUT_" + name.upper().replace("-", "_")
    assert var in env, f"input {name} is not passed as {var}"
    assert var in script, f"scripts/ci-action.sh does not read {var}"
assert 'ci-action.sh" install' in text and 'ci-action.sh" run' in text
PY
echo "action: ok"
