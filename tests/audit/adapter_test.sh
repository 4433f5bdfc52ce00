#!/bin/bash
# adapter_test.sh — the Python adapter's own unittest tests (python/tests:
# the library, and a scripted MCP client session with
# `python -m txguard_adapter.mcp`) against the built binary. Skips (77) only
# while txguard cannot run a command yet.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! (cd "$TG_TMP" && "$TXGUARD" --no-default-policy -q -- true) 2>"$TG_TMP/probe.err"; then
	tg_cannot_run "$TG_TMP/probe.err"
fi
cd "$TXGUARD_SOURCE_DIR/python/tests" || fail "no python/tests"
# -B: no __pycache__ in the source tree.
PYTHONDONTWRITEBYTECODE=1 "$PY" -B -m unittest -v test_adapter test_mcp 2>&1 | tee "$TG_TMP/unittest.out"
status=${PIPESTATUS[0]}
# Every test really ran: a skipped Run class would hide a broken binary.
if grep -q 'skipped' "$TG_TMP/unittest.out"; then
	fail "some adapter tests were skipped"
fi
exit "$status"
