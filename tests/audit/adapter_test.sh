#!/bin/bash
# adapter_test.sh — scripts/txguard_adapter's own unittest tests against the
# built binary. Skips (77) only while txguard cannot run a command yet.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if ! (cd "$TG_TMP" && "$TXGUARD" --no-default-policy -q -- true) 2>"$TG_TMP/probe.err"; then
	tg_cannot_run "$TG_TMP/probe.err"
fi
cd "$TXGUARD_SOURCE_DIR/scripts/txguard_adapter" || fail "no scripts/txguard_adapter"
# -B: no __pycache__ in the source tree.
"$PY" -B -m unittest -v test_adapter 2>&1 | tee "$TG_TMP/unittest.out"
status=${PIPESTATUS[0]}
# Every test really ran: a skipped Run class would hide a broken binary.
if grep -q 'skipped' "$TG_TMP/unittest.out"; then
	fail "some adapter tests were skipped"
fi
exit "$status"
