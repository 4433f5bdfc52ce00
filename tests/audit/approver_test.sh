#!/bin/sh
# approver_test.sh — `action: ask` and --approver (issue 13): allow, deny,
# remember, timeout, garbage, crash, non-zero exit, no approver; the
# approver gets the decision as JSON on stdin; the report and the log say
# who decided, and validate against the schemas.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
WS="$TG_TMP/ws"
mkdir -p "$WS"
cat >"$TG_TMP/ask.yaml" <<'Y'
version: 1
rules:
  - id: ask-touch
    reason: touch needs a yes
    action: ask
    errno: EACCES
    exec: {program: [touch]}
    examples:
      match: [touch x]
      not_match: [ls]
Y
"$TXGUARD" policy check -p "$TG_TMP/ask.yaml" >/dev/null || fail "a policy with action: ask does not check"

n=0
# run NAME APPROVER: touch a then b, keep rc/report/log
run() {
	name=$1; shift
	rm -f "$WS/a" "$WS/b"
	rc=0
	(cd "$WS" && "$TXGUARD" -q --report "$TG_TMP/$name.json" --log "$TG_TMP/$name.log" --approver-timeout 2s \
		-p "$TG_TMP/ask.yaml" "$@" -- sh -c 'touch a; touch b') 2>"$TG_TMP/$name.err" || rc=$?
	echo "$rc" >"$TG_TMP/$name.rc"
	echo "$TG_TMP/$name.json" >>"$TG_TMP/reports"
	echo "$TG_TMP/$name.log" >>"$TG_TMP/logs"
}
# who NAME: "action decided_by count" per decision
who() {
	python3 -c 'import json,sys
for d in json.load(open(sys.argv[1]))["decisions"]:
    print(d["action"], d.get("decided_by"), d["rule"])' "$TG_TMP/$1.json"
}
reason() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["decisions"][0]["reason"])' "$TG_TMP/$1.json"
}

cat >"$TG_TMP/yes.sh" <<EOS
#!/bin/sh
cat >>"$TG_TMP/questions"
echo '{"decision": "allow", "reason": "ok by ci"}'
EOS
chmod +x "$TG_TMP/yes.sh"
run allow --approver "$TG_TMP/yes.sh"
assert_eq "allow: rc" 0 "$(cat "$TG_TMP/allow.rc")"
[ -e "$WS/a" ] && [ -e "$WS/b" ] || fail "allow: the approved touches did not run"
assert_eq "allow: decisions" "allow approver ask-touch
allow approver ask-touch" "$(who allow)"
assert_eq "allow: reason" "ok by ci" "$(reason allow)"
python3 -c 'import json,sys
qs=[json.loads(l) for l in open(sys.argv[1])]
assert len(qs)==2, qs
q=qs[0]
assert q["rule"]=="ask-touch" and q["op"]=="exec" and q["argv"]==["touch","a"], q
assert q["path"].endswith("/touch") and q["workspace"]==sys.argv[2], q' "$TG_TMP/questions" "$WS" ||
	fail "the approver did not get the decision as JSON"

run remember --approver "echo '{\"decision\":\"allow\",\"remember\":true}'; echo x >>'$TG_TMP/asked'"
assert_eq "remember: asked once" 1 "$(wc -l <"$TG_TMP/asked")"
assert_eq "remember: rc" 0 "$(cat "$TG_TMP/remember.rc")"

run deny --approver "echo '{\"decision\":\"deny\",\"reason\":\"not today\"}'"
[ "$(cat "$TG_TMP/deny.rc")" != 0 ] || fail "deny: the command succeeded"
[ ! -e "$WS/a" ] || fail "deny: touch ran"
assert_eq "deny: decisions" "deny approver ask-touch
deny approver ask-touch" "$(who deny)"
assert_eq "deny: reason" "not today" "$(reason deny)"

# Everything else is a deny decided by txguard, with the reason.
check_fail() {
	name=$1 want=$2; shift 2
	run "$name" "$@"
	[ ! -e "$WS/a" ] || fail "$name: touch ran"
	assert_eq "$name: decided by" "deny txguard ask-touch" "$(who "$name" | head -1)"
	case $(reason "$name") in *"$want"*) ;; *) fail "$name: reason '$(reason "$name")' lacks '$want'" ;; esac
}
check_fail timeout "did not answer within 2000 ms" --approver "sleep 30"
check_fail garbage "is not {" --approver "echo garbage"
check_fail crash "killed by SIGSEGV" --approver 'kill -SEGV $$'
check_fail exit3 "exited 3 without an answer" --approver 'exit 3'
check_fail badword "is not {" --approver "echo '{\"decision\":\"maybe\"}'"
check_fail none "none was given"

xargs python3 "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" report <"$TG_TMP/reports" >/dev/null ||
	fail "a report does not validate"
xargs python3 "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" log <"$TG_TMP/logs" >/dev/null ||
	fail "a log does not validate"
grep -q '"decided_by":"approver"' "$TG_TMP/allow.log" || fail "the log does not say who decided"
echo ok
