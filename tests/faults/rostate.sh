#!/bin/sh
# rostate.sh — a read-only state dir (a read-only bind mount of it): the run
# fails closed with 125 and a message, and the command never runs
# unjournaled — the workspace is untouched.
TG_FAULTS_NS=${TG_FAULTS_NS:-want}
. "$(dirname "$0")/lib.sh"
require_runs

ws=$T/ws
st=$T/state
mkdir -p "$ws" "$st"
echo before >"$ws/f"

# ro_state: make $st a read-only bind mount of itself.
ro_state() {
	mount --bind "$st" "$st"
	MOUNTS="$st ${MOUNTS:-}"
	mount -o remount,bind,ro "$st"
	if touch "$st/.probe" 2>/dev/null; then fail "the bind mount is not read-only"; fi
}

# check_fails_closed WHAT: a mutating command under txguard exits 125 with
# a message naming the journal, and neither it nor its change happened.
check_fails_closed() {
	manifest "$ws" >"$T/before"
	rc=0
	tg -w "$ws" --state-dir "$st" -- sh -c 'echo ran >"$1/ran"; echo after >f; rm -f f' sh "$T" \
		>"$T/out" 2>"$T/err" || rc=$?
	assert_eq "$1: exit code" 125 "$rc"
	[ -s "$T/err" ] || fail "$1: no message on stderr"
	grep -qi 'journal\|state\|read-only' "$T/err" || { cat "$T/err" >&2; fail "$1: the message does not say what failed"; }
	[ ! -e "$T/ran" ] || fail "$1: the command ran although nothing could be journaled"
	assert_manifest "$1" "$T/before" "$ws"
}

# A state dir that was never used, read-only from the start.
ro_state
check_fails_closed "fresh read-only state dir"
umount "$st"
MOUNTS=

# A state dir with history (lock file, txn/ present), then made read-only.
rc=0
tg -w "$ws" --state-dir "$st" -- sh -c 'echo one >f' || rc=$?
assert_eq "a normal run" 0 "$rc"
ro_state
check_fails_closed "used state dir made read-only"
assert_eq "the committed change stays" one "$(cat "$ws/f")"

# recover on a read-only state dir with nothing to recover is not an error
# worth 125, but it must not claim to have restored anything either.
rc=0
"$TXGUARD" recover -w "$ws" --state-dir "$st" >"$T/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 125 ] || { cat "$T/out" >&2; fail "recover on a read-only state dir: exit $rc"; }
assert_eq "workspace after recover" one "$(cat "$ws/f")"

echo "ok: a read-only state dir fails closed"
