#!/bin/bash
# schema_test.sh — real tg_report_write()/tg_log output (every event kind,
# every outcome, non-UTF-8 bytes) must validate against docs/schema/, and the
# schemas must reject wrong documents.
. "$(dirname "$0")/../lib/common.sh"
SAMPLE=${1:?usage: schema_test.sh AUDIT_SAMPLE}
PY=/usr/bin/python3
"$PY" -c 'import jsonschema' 2>/dev/null || PY=python3
"$PY" -c 'import jsonschema' 2>/dev/null ||
	skip "python3 module jsonschema missing (apt-get install python3-jsonschema)"
tg_tmpdir

"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" selftest || exit $?
"$SAMPLE" "$TG_TMP" || fail "audit_sample failed"
"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" report "$TG_TMP"/report-*.json || exit $?
"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" log "$TG_TMP"/log-*.jsonl || exit $?

# The levels filter as documented: only the all-level log has allow decisions,
# and decisions-level has no process events.
grep -q '"action":"allow"' "$TG_TMP/log-decisions.jsonl" && fail "allow decision at level decisions"
grep -q '"event":"process_start"' "$TG_TMP/log-decisions.jsonl" && fail "process_start at level decisions"
grep -q '"event":"process_start"' "$TG_TMP/log-exec.jsonl" || fail "no process_start at level exec"
grep -q '"action":"allow"' "$TG_TMP/log-all.jsonl" || fail "no allow decision at level all"
echo "schema test: ok"
