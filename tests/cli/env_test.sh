#!/bin/sh
# env_test.sh — the environment is read once, at the edge: a bad value is a
# command-line error naming the variable (exit 2, nothing runs), an option
# beats its variable, and TXGUARD_STATE_DIR is the state dir itself.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
ws="$TG_TMP/ws"
mkdir -p "$ws"
unset TXGUARD_STATE_DIR TXGUARD_JOURNAL_SYNC TXGUARD_HISTORY_MAX_RUNS TXGUARD_HISTORY_MAX_BYTES \
	TXGUARD_POLICY TXGUARD_PROXY_RESOLVE TXGUARD_PROXY_TIMEOUT TG_JOURNAL_DEBUG TXGUARD_POLICY_CACHE
tg() { "$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" -w "$ws" "$@"; }

# refused VAR VALUE: exit 2, one line naming VAR, and the command never ran.
refused() {
	rc=0
	env "$1=$2" "$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" -w "$ws" \
		--state-dir "$TG_TMP/st-refused" -- touch "$ws/ran" 2>"$TG_TMP/err" || rc=$?
	assert_eq "$1=$2 exits 2" 2 "$rc"
	grep -q "$1" "$TG_TMP/err" || fail "$1=$2: the error does not name the variable: $(cat "$TG_TMP/err")"
	[ ! -e "$ws/ran" ] || fail "$1=$2: the command ran"
}
refused TXGUARD_JOURNAL_SYNC sometimes
refused TXGUARD_HISTORY_MAX_RUNS 0
refused TXGUARD_HISTORY_MAX_RUNS lots
refused TXGUARD_HISTORY_MAX_BYTES -1
refused TXGUARD_PROXY_TIMEOUT soon
refused TG_JOURNAL_DEBUG 7
refused TXGUARD_POLICY_CACHE off
# A relative state dir would depend on where txguard was started.
rc=0
(cd "$TG_TMP" && TXGUARD_STATE_DIR=rel-state tg -- touch "$ws/ran") 2>"$TG_TMP/err" || rc=$?
assert_eq "relative TXGUARD_STATE_DIR exits 2" 2 "$rc"
grep -q TXGUARD_STATE_DIR "$TG_TMP/err" || fail "the error does not name TXGUARD_STATE_DIR: $(cat "$TG_TMP/err")"
if [ -e "$ws/ran" ] || [ -e "$TG_TMP/rel-state" ]; then fail "a relative TXGUARD_STATE_DIR was used"; fi

"$TXGUARD" doctor >/dev/null 2>&1 || skip "txguard doctor: this kernel forbids what txguard needs"
tg --state-dir "$TG_TMP/probe" -- true >/dev/null 2>"$TG_TMP/probe.err" || tg_cannot_run "$TG_TMP/probe.err"

# --journal-sync beats the variable: its bad value is never even read.
rc=0
TXGUARD_JOURNAL_SYNC=sometimes tg --state-dir "$TG_TMP/st1" --journal-sync full -- true 2>"$TG_TMP/err" || rc=$?
assert_eq "--journal-sync beats TXGUARD_JOURNAL_SYNC" 0 "$rc"

# TXGUARD_STATE_DIR is the state dir itself, not a parent of one; --state-dir beats it.
TXGUARD_STATE_DIR="$TG_TMP/sd" tg -- sh -c 'echo one >f' || fail "run with TXGUARD_STATE_DIR"
[ -e "$TG_TMP/sd/lock" ] || fail "no lock directly in TXGUARD_STATE_DIR: $(ls -R "$TG_TMP/sd" 2>&1)"
"$TXGUARD" log -w "$ws" --state-dir "$TG_TMP/sd" >"$TG_TMP/log" 2>&1 || fail "log: $(cat "$TG_TMP/log")"
grep -q "echo one" "$TG_TMP/log" || fail "the run is not in TXGUARD_STATE_DIR's history: $(cat "$TG_TMP/log")"
TXGUARD_STATE_DIR="$TG_TMP/sd" tg --state-dir "$TG_TMP/sd2" -- sh -c 'echo two >g' || fail "run with --state-dir"
[ -e "$TG_TMP/sd2/lock" ] || fail "--state-dir did not beat TXGUARD_STATE_DIR"
TXGUARD_STATE_DIR="$TG_TMP/sd" "$TXGUARD" log -w "$ws" >"$TG_TMP/log" 2>&1 || fail "log: $(cat "$TG_TMP/log")"
grep -q "echo two" "$TG_TMP/log" && fail "the --state-dir run landed in TXGUARD_STATE_DIR"
grep -q "echo one" "$TG_TMP/log" || fail "log without --state-dir does not read TXGUARD_STATE_DIR"
echo "ok: the environment is resolved at the edge"
