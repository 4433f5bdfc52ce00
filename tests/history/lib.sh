# lib.sh — shared by the history tests: a workspace, a state dir and a
# permissive policy in this test's own temp dir, and tree snapshots.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
ws="$TG_TMP/ws"
mkdir -p "$ws" "$TG_TMP/home"
export TXGUARD_STATE_DIR="$TG_TMP/state"
export HOME="$TG_TMP/home"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
# The policy under test here is history, not the default rules: allow all
# (writes still stay inside the workspace).
printf 'version: 1\n' >"$TG_TMP/policy.yaml"

# tg ARGS -- CMD: a run under txguard on the workspace, from inside it.
tg() { (cd "$ws" && "$TXGUARD" -q --no-default-policy -p "$TG_TMP/policy.yaml" -w "$ws" "$@"); }
# h SUBCOMMAND ARGS: a history subcommand on the workspace (options before
# the id: the contract allows them after it too, but that is the parser's
# business, tested in tests/cli).
h() { sub=$1; shift; "$TXGUARD" "$sub" -w "$ws" "$@"; }
code() { rc=0; "$@" || rc=$?; echo "$rc"; }

require_runs() {
	TXGUARD_STATE_DIR="$TG_TMP/probe-state" tg -- true >/dev/null 2>"$TG_TMP/probe.err" ||
		tg_cannot_run "$TG_TMP/probe.err"
}

# snapshot DIR: what undo must give back exactly (see snapshot.py).
snapshot() { python3 "$TXGUARD_SOURCE_DIR/tests/history/snapshot.py" "$1"; }

# assert_tree WHAT EXPECTED_SNAPSHOT: the workspace equals the snapshot.
assert_tree() {
	now=$(snapshot "$ws")
	if [ "$2" != "$now" ]; then
		printf '%s\n' "$2" >"$TG_TMP/want"
		printf '%s\n' "$now" >"$TG_TMP/got"
		diff -u "$TG_TMP/want" "$TG_TMP/got" >&2 || true
		fail "$1: the workspace differs from the snapshot"
	fi
}

# ids: the history's ids, newest first, one per line.
ids() { h log --json | python3 -c 'import json,sys; [print(e["id"]) for e in json.load(sys.stdin)]'; }
# field ID KEY: one field of a run in `log --json` (counts.X for counts).
field() {
	h log --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    if e["id"] == sys.argv[1]:
        v = e
        for k in sys.argv[2].split("."):
            v = v[k]
        print(v)' "$1" "$2"
}

# show_agrees ID: `show` lists as many paths of each kind as `log` counts.
show_agrees() {
	h log --json >"$TG_TMP/log.json"
	h show --json "$1" | python3 -c '
import collections, json, sys
show = json.load(sys.stdin)
log = [e for e in json.load(open(sys.argv[1])) if e["id"] == show["id"]][0]
got = collections.Counter(c["kind"] for c in show["changes"])
want = {k: v for k, v in log["counts"].items() if v}
if dict(got) != want:
    sys.exit("show %s lists %s, log counts %s" % (show["id"], dict(got), want))' "$TG_TMP/log.json" ||
		fail "show and log disagree on run $1"
}
