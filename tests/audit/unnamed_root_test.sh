#!/bin/sh
# unnamed_root_test.sh — a process of the tree that enters another mount
# namespace (setns) has a root txguard cannot name; its path calls are
# refused with EACCES, and each refusal is a decision (rule
# txguard.unnamed-root) and one stderr line, like any other (issue 13).
#
# The other namespace is made here, outside the tree: a private mount
# namespace (nothing propagates back to the machine's) whose root is a
# tmpfs (pivot_root), held by a shell that waits on a FIFO. The tree gets
# that namespace as an inherited fd and enters it with nsenter.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace with its own root, and setns into it)"
for c in unshare nsenter pivot_root python3; do
	command -v "$c" >/dev/null || skip "needs $c"
done
tg_tmpdir_outside
D="$TG_TMP/nsroot"
mkdir -p "$D" "$TG_TMP/ws"
mkfifo "$TG_TMP/hold"
unshare --mount --propagation private sh -c \
	"mount -t tmpfs txguard-test '$D' && mkdir '$D/old' && cd '$D' && pivot_root . old && echo ready && read x" \
	<"$TG_TMP/hold" >"$TG_TMP/holder.out" 2>&1 &
holder=$!
exec 3>"$TG_TMP/hold"
trap 'exec 3>&-; wait "$holder" 2>/dev/null || true; rm -rf "$TG_TMP"' EXIT
i=0
while ! grep -q ready "$TG_TMP/holder.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
grep -q ready "$TG_TMP/holder.out" ||
	skip "cannot make a mount namespace with its own root here: $(cat "$TG_TMP/holder.out")"

rc=0
(cd "$TG_TMP/ws" && "$TXGUARD" --report "$TG_TMP/r.json" --log "$TG_TMP/l.log" -w "$TG_TMP/ws" \
	-- nsenter --mount=/proc/self/fd/4 -- /bin/true 4<"/proc/$holder/ns/mnt") \
	>"$TG_TMP/out" 2>"$TG_TMP/err" || rc=$?
assert_eq "exit status (exec refused: cannot execute)" 126 "$rc"
got=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
for d in r["decisions"]: print(d["rule"], d["op"], d["path"], d["errno"], d["count"], d["source"])' "$TG_TMP/r.json")
assert_eq "decisions" "txguard.unnamed-root exec /bin/true EACCES 1 builtin" "$got"
assert_eq "stderr lines" 1 "$(grep -c "^txguard: denied exec .\(/bin/true\). by rule txguard\.unnamed-root: " "$TG_TMP/err")"
# Said while nsenter still waits in its execve: before its own message.
ours=$(grep -n "^txguard: denied exec " "$TG_TMP/err" | cut -d: -f1)
theirs=$(grep -n "^nsenter: " "$TG_TMP/err" | cut -d: -f1)
[ -n "$ours" ] && [ -n "$theirs" ] && [ "$ours" -lt "$theirs" ] ||
	fail "txguard's line is not before nsenter's: $(cat "$TG_TMP/err")"
assert_eq "log events" 1 "$(grep -c '"event":"decision"' "$TG_TMP/l.log")"
echo ok
