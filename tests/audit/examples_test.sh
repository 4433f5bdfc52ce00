#!/bin/bash
# examples_test.sh — the examples do what their comments say, with the built
# binary: the shell loop stops at the failing step with it rolled back, the
# CI step's run: block fails/passes with make and leaves a report, and the
# agent tool tells the agent its changes were undone.
. "$(dirname "$0")/../lib/common.sh"
EX=$TXGUARD_SOURCE_DIR/examples
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
tg_tmpdir
if ! (cd "$TG_TMP" && "$TXGUARD" --no-default-policy -q -- true) 2>"$TG_TMP/probe.err"; then
	tg_cannot_run "$TG_TMP/probe.err"
fi
command -v make >/dev/null || fail "make is needed (scripts/install-deps.sh installs it)"

# --- shell-loop.sh -----------------------------------------------------------------
WS=$TG_TMP/loop
mkdir -p "$WS"
cp /bin/true "$WS/forbidden-tool"
set +e
(cd "$WS" && TXGUARD=$TXGUARD REPORT_DIR=$TG_TMP/loop-reports \
	TXGUARD_OPTS="--no-default-policy -p $TXGUARD_SOURCE_DIR/tests/audit/audit-policy.yaml -q" \
	"$EX/shell-loop.sh" 'echo one > a.txt; ./forbidden-tool || true' 'echo two > b.txt; exit 4' \
	'echo three > c.txt') >"$TG_TMP/loop.out" 2>&1
rc=$?
set -e
assert_eq "shell-loop: exit" 4 "$rc"
grep -q '^step 1: exit 0, committed: ' "$TG_TMP/loop.out" || fail "shell-loop: step 1: $(cat "$TG_TMP/loop.out")"
grep -q '^    "rule":"audit-test-deny-exec"$' "$TG_TMP/loop.out" || fail "shell-loop: rule not shown: $(cat "$TG_TMP/loop.out")"
grep -q '^step 2: exit 4, rolled_back: ' "$TG_TMP/loop.out" || fail "shell-loop: step 2: $(cat "$TG_TMP/loop.out")"
if grep -q '^step 3' "$TG_TMP/loop.out"; then fail "shell-loop: went on after a failure"; fi
assert_eq "shell-loop: step 1 kept" one "$(cat "$WS/a.txt")"
[ ! -e "$WS/b.txt" ] || fail "shell-loop: step 2's b.txt survived"
[ -s "$TG_TMP/loop-reports/step-2.json" ] || fail "shell-loop: no report for step 2"

# --- ci-step.yml ----------------------------------------------------------------------
"$PY" - "$EX/ci-step.yml" "$TG_TMP/ci-step.sh" "$TG_TMP/ci-env" <<'PYEOF' || fail "ci-step.yml is not the expected step"
import re, shlex, sys
text = open(sys.argv[1]).read()
try:
    import yaml
    step = yaml.safe_load(text)["steps"][0]
except ImportError:
    # No PyYAML (it is not a dependency): read the one block form used here.
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if re.match(r"\s*run: \|$", l))
    ind = len(lines[start]) - len(lines[start].lstrip()) + 2
    body = []
    for l in lines[start + 1:]:
        if l.strip() and len(l) - len(l.lstrip()) < ind:
            break
        body.append(l[ind:])
    env = dict(re.findall(r"^\s{6}([A-Z_]+): (\S+)$", text, re.M))
    step = {"shell": re.search(r"shell: (\w+)", text).group(1), "run": "\n".join(body) + "\n", "env": env}
assert step["shell"] == "bash" and "make test" in step["run"], step
open(sys.argv[2], "w").write(step["run"])
open(sys.argv[3], "w").write("".join(f"export {k}={shlex.quote(str(v))}\n" for k, v in step["env"].items()))
PYEOF
mkdir -p "$TG_TMP/bin"
ln -s "$TXGUARD" "$TG_TMP/bin/txguard"
ci_run() {   # ci_run DIR: the step's run: block in checkout DIR, as a CI would
	(cd "$1" && . "$TG_TMP/ci-env" && export TXGUARD_STATE_DIR=$TG_TMP/ci-state &&
		PATH=$TG_TMP/bin:$PATH bash -e "$TG_TMP/ci-step.sh") >"$1.out" 2>&1
}
mkdir -p "$TG_TMP/ci-fail" "$TG_TMP/ci-pass"
printf 'test:\n\techo built > out.txt\n\texit 2\n' >"$TG_TMP/ci-fail/Makefile"
printf 'test:\n\techo built > out.txt\n' >"$TG_TMP/ci-pass/Makefile"
set +e
ci_run "$TG_TMP/ci-fail"
rc=$?
set -e
assert_eq "ci-step (failing make): exit" 2 "$rc"
[ ! -e "$TG_TMP/ci-fail/out.txt" ] || fail "ci-step: the failed test run's out.txt survived"
grep -q 'outcome rolled_back' "$TG_TMP/ci-fail.out" || fail "ci-step: $(cat "$TG_TMP/ci-fail.out")"
"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" report "$TG_TMP/ci-fail/txguard-out/report.json" >/dev/null ||
	fail "ci-step: report invalid"
"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" log "$TG_TMP/ci-fail/txguard-out/events.jsonl" >/dev/null ||
	fail "ci-step: log invalid"
ci_run "$TG_TMP/ci-pass" || fail "ci-step (passing make) failed: $(cat "$TG_TMP/ci-pass.out")"
assert_eq "ci-step: kept" built "$(cat "$TG_TMP/ci-pass/out.txt")"
grep -q 'outcome committed' "$TG_TMP/ci-pass.out" || fail "ci-step: $(cat "$TG_TMP/ci-pass.out")"

# --- agent_tool.py -----------------------------------------------------------------------
mkdir -p "$TG_TMP/agent"
out=$("$PY" -B "$EX/agent_tool.py" "$TG_TMP/agent" 'echo hi; echo x > f.txt; exit 1')
case $out in
*"hi"*"[exit 1; all 1 change(s) were undone"*) ;;
*) fail "agent_tool: $out" ;;
esac
[ ! -e "$TG_TMP/agent/f.txt" ] || fail "agent_tool: f.txt survived"
echo "examples: ok"
