#!/bin/sh
# secret_read_test.sh [--unpriv] — reads of secrets reach the caller (issue
# 13). As root, where the kernel has fanotify permission events, each read
# of a deny_read file (or of a file below a deny_read directory) is one
# decision, one stderr line naming the rule, one log event, and the rule is
# not listed as unobserved; a host process reading the same files meanwhile
# is not blocked. Unprivileged (--unpriv as root, or run as a user), Landlock
# refuses the read without a trace and the report lists the rule under
# "unobserved", as before. The secrets are files of this test only, given
# with a -p drop-in.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir_outside
chmod 755 "$TG_TMP"
S="$TG_TMP/secrets"
H="$TG_TMP/home"
O="$TG_TMP/out"
mkdir -p "$S/dir/sub/deeper" "$H" "$TG_TMP/ws" "$O"
echo "TOP-$$" >"$S/file"
echo "NESTED-$$" >"$S/dir/sub/deeper/key"
printf '#!/bin/sh\necho RAN\n' >"$S/dir/tool"
chmod 755 "$S/dir/tool"
chmod -R go+rX "$S"
cat >"$TG_TMP/secrets.yaml" <<EOP
version: 1
paths:
  deny_read: [$S/file, $S/dir]
EOP
chmod 644 "$TG_TMP/secrets.yaml"
cp "$TXGUARD" "$TG_TMP/txguard"
chmod 755 "$TG_TMP/txguard"
PY=$(command -v python3) || skip "needs python3"

runas() { env HOME="$H" TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d" "$@"; }
priv=1
if [ "${1:-}" = --unpriv ]; then
	[ "$(id -u)" = 0 ] || skip "needs root to switch to an unprivileged user"
	command -v setpriv >/dev/null || skip "needs setpriv(1)"
	chown -R 65534:65534 "$H" "$TG_TMP/ws" "$O"
	runas() {
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			env -u XDG_STATE_HOME HOME="$H" TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d" "$@"
	}
	priv=0
elif [ "$(id -u)" != 0 ]; then
	priv=0
fi
runas "$TG_TMP/txguard" doctor 2>/dev/null | grep -qiE "^landlock: *abi [1-9]" ||
	skip_kernel "needs Landlock (txguard doctor shows no Landlock ABI)"
if [ "$priv" = 1 ]; then
	# Root: only a kernel without fanotify permission events may skip, and
	# TXGUARD_TESTS_MUST_WORK=1 makes that a failure.
	runas "$TG_TMP/txguard" doctor --json | grep -q '"fanotify_perm":true' ||
		skip "the kernel has no fanotify permission events (CONFIG_FANOTIFY_ACCESS_PERMISSIONS): $(runas "$TG_TMP/txguard" doctor | grep -i fanotify)"
else
	runas "$TG_TMP/txguard" doctor --json | grep -q '"fanotify_perm":false' ||
		fail "fanotify permission events are usable without privilege: $(runas "$TG_TMP/txguard" doctor | grep -i fanotify)"
fi

# tg CASE -- CMD: run with the drop-in, keep rc, stdout, stderr, report, log.
tg() {
	case_=$1; shift
	rc=0
	(cd "$TG_TMP/ws" && runas "$TG_TMP/txguard" -p "$TG_TMP/secrets.yaml" --report "$O/$case_.json" \
		--log "$O/$case_.log" -w "$TG_TMP/ws" "$@") >"$O/$case_.out" 2>"$O/$case_.err" || rc=$?
	echo "$rc" >"$O/$case_.rc"
}
# decisions CASE: "rule op path errno count" per decision
decisions() {
	"$PY" -c 'import json,sys
r=json.load(open(sys.argv[1]))
for d in r["decisions"]: print(d["rule"], d["op"], d["path"], d["errno"], d["count"])' "$O/$1.json"
}
# unobserved CASE: the paths listed under the deny-read rule, one a line
unobserved() {
	"$PY" -c 'import json,sys
r=json.load(open(sys.argv[1]))
for u in r["unobserved"]:
    if u["rule"]=="deny-read": print("\n".join(u["paths"]))' "$O/$1.json"
}
lines() { grep -c "^txguard: denied" "$O/$1.err" || true; }
logged() { grep -c '"event":"decision"' "$O/$1.log" || true; }

# expect_read CASE PATH SECRET: a read of PATH was refused, as this user's
# kernel interfaces allow.
expect_read() {
	[ "$(cat "$O/$1.rc")" != 0 ] || fail "$1: the secret was readable (exit 0)"
	grep -q "$3" "$O/$1.out" && fail "$1: the secret's content reached the output"
	if [ "$priv" = 1 ]; then
		assert_eq "$1: decisions" "deny-read open $2 EPERM 1" "$(decisions "$1")"
		[ "$(lines "$1")" = 1 ] || { cat "$O/$1.err" "$O/$1.log" >&2; }
		assert_eq "$1: stderr lines" 1 "$(lines "$1")"
		grep -q "^txguard: denied read of $2 by rule deny-read: secrets" "$O/$1.err" ||
			fail "$1: the line does not name the read and the rule: $(cat "$O/$1.err")"
		assert_eq "$1: log events" 1 "$(logged "$1")"
		grep '"event":"decision"' "$O/$1.log" | grep -q '"source":"fanotify"' ||
			fail "$1: the log's decision does not say fanotify refused it: $(cat "$O/$1.log")"
		unobserved "$1" | grep -qx "$S/file\|$S/dir" &&
			fail "$1: a secret under fanotify is still listed as unobserved: $(unobserved "$1")"
		grep -q "note:" "$O/$1.err" && fail "$1: an unobserved note although the refusal was seen"
	else
		assert_eq "$1: decisions" "" "$(decisions "$1")"
		assert_eq "$1: stderr lines" 0 "$(lines "$1")"
		unobserved "$1" | grep -qx "$S/file" || fail "$1: $S/file is not listed as unobserved: $(unobserved "$1")"
		unobserved "$1" | grep -qx "$S/dir" || fail "$1: $S/dir is not listed as unobserved: $(unobserved "$1")"
		grep -q "^txguard: note: Landlock enforces rule deny-read on" "$O/$1.err" ||
			fail "$1: no note after a failed run: $(cat "$O/$1.err")"
	fi
	return 0
}

# 1. A deny_read file.
tg file -- cat "$S/file"
expect_read file "$S/file" "TOP-$$"

# 2. A file two directories below a deny_read directory.
tg nested -- cat "$S/dir/sub/deeper/key"
expect_read nested "$S/dir/sub/deeper/key" "NESTED-$$"

# 3. An exec of a program inside a deny_read directory.
tg exec -- "$S/dir/tool"
[ "$(cat "$O/exec.rc")" = 126 ] || fail "exec: expected 126 (cannot execute), got $(cat "$O/exec.rc")"
grep -q RAN "$O/exec.out" && fail "exec: the secret program ran"
if [ "$priv" = 1 ]; then
	assert_eq "exec: decisions" "deny-read exec $S/dir/tool EPERM 1" "$(decisions exec)"
	assert_eq "exec: stderr lines" 1 "$(lines exec)"
fi

# 4. While a run holds its marks, a process of the host (not in the tree)
#    reads the same secrets, unhindered and without waiting.
rm -f "$TG_TMP/ws/ready" "$TG_TMP/ws/done"
(cd "$TG_TMP/ws" && runas "$TG_TMP/txguard" -p "$TG_TMP/secrets.yaml" --report "$O/host.json" -w "$TG_TMP/ws" \
	-- sh -c 'touch ready; i=0; while [ ! -e done ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done') \
	>"$O/host.out" 2>"$O/host.err" &
run=$!
i=0
while [ ! -e "$TG_TMP/ws/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
[ -e "$TG_TMP/ws/ready" ] || { kill "$run" 2>/dev/null; fail "host: the run did not start: $(cat "$O/host.err")"; }
got=$(timeout 5 cat "$S/file") || { touch "$TG_TMP/ws/done"; fail "host: reading the secret failed or hung during a run"; }
got2=$(timeout 5 cat "$S/dir/sub/deeper/key") || { touch "$TG_TMP/ws/done"; fail "host: reading the nested secret failed or hung"; }
touch "$TG_TMP/ws/done"
wait "$run" || fail "host: the run failed: $(cat "$O/host.err")"
assert_eq "host: file" "TOP-$$" "$got"
assert_eq "host: nested" "NESTED-$$" "$got2"
assert_eq "host: decisions" "" "$(decisions host)"

# 5. A supervisor that dies leaves nobody blocked: with txguard stopped, a
#    host process opening the secret waits for its answer; when txguard is
#    killed, the kernel closes its fanotify group and allows the open.
if [ "$priv" = 1 ]; then
	rm -f "$TG_TMP/ws/ready"
	env HOME="$H" TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d" "$TG_TMP/txguard" \
		-p "$TG_TMP/secrets.yaml" -w "$TG_TMP/ws" -- sh -c 'touch ready; sleep 30' \
		>"$O/crash.out" 2>"$O/crash.err" &
	sup=$!
	i=0
	while [ ! -e "$TG_TMP/ws/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
	[ -e "$TG_TMP/ws/ready" ] || { kill -9 "$sup"; fail "crash: the run did not start: $(cat "$O/crash.err")"; }
	kill -STOP "$sup"
	# The stop is delivered to each of txguard's threads in its own time:
	# the secrets' thread may answer one more open first. Wait (bounded)
	# until every thread is stopped (T), as the case means.
	i=0
	while [ $i -lt 200 ]; do
		running=0
		for t in /proc/"$sup"/task/*/stat; do
			st=$(sed 's/.*) //' "$t" 2>/dev/null | cut -d' ' -f1)
			[ -z "$st" ] || [ "$st" = T ] || running=1
		done
		[ "$running" = 0 ] && break
		sleep 0.01
		i=$((i + 1))
	done
	[ "$running" = 0 ] || { kill -9 "$sup"; fail "crash: txguard did not stop"; }
	timeout 20 cat "$S/file" >"$O/crash.read" 2>&1 &
	reader=$!
	sleep 0.5
	kill -0 "$reader" 2>/dev/null || { kill -9 "$sup"; fail "crash: the read did not wait for a stopped txguard: $(cat "$O/crash.read")"; }
	kill -KILL "$sup"
	rc=0
	wait "$reader" || rc=$?
	wait "$sup" 2>/dev/null || true
	assert_eq "crash: the host's read once txguard died (exit)" 0 "$rc"
	assert_eq "crash: the host's read" "TOP-$$" "$(cat "$O/crash.read")"
fi

# 6. A deny_read directory past the bounds of the walk (over 1000
#    subdirectories) is not marked: it stays Landlock's, refused without a
#    decision and listed as unobserved, root or not.
mkdir -p "$S/big"
seq 1 1001 | (cd "$S/big" && xargs mkdir)
echo "BIG-$$" >"$S/big/1/key"
chmod -R go+rX "$S/big"
cat >"$TG_TMP/big.yaml" <<EOP
version: 1
paths:
  deny_read: [$S/big]
EOP
chmod 644 "$TG_TMP/big.yaml"
rc=0
(cd "$TG_TMP/ws" && runas "$TG_TMP/txguard" -p "$TG_TMP/big.yaml" --report "$O/big.json" -w "$TG_TMP/ws" \
	-- cat "$S/big/1/key") >"$O/big.out" 2>"$O/big.err" || rc=$?
[ "$rc" != 0 ] || fail "big: the secret was readable"
grep -q "BIG-$$" "$O/big.out" && fail "big: the secret's content reached the output"
assert_eq "big: decisions" "" "$(decisions big)"
unobserved big | grep -qx "$S/big" || fail "big: $S/big is not listed as unobserved: $(unobserved big)"

# 7. A secret inside a writable place stays Landlock's, root or not: there
#    its exclusion is also what keeps it from being removed.
mkdir -p "$TG_TMP/place"
echo "PLACE-$$" >"$TG_TMP/place/key"
chmod -R go+rwX "$TG_TMP/place"
cat >"$TG_TMP/place.yaml" <<EOP
version: 1
paths:
  writable: [$TG_TMP/place]
  deny_read: [$TG_TMP/place/key]
EOP
chmod 644 "$TG_TMP/place.yaml"
rc=0
(cd "$TG_TMP/ws" && runas "$TG_TMP/txguard" -p "$TG_TMP/place.yaml" --report "$O/place.json" -w "$TG_TMP/ws" \
	-- sh -c "cat '$TG_TMP/place/key'; rm -f '$TG_TMP/place/key'") >"$O/place.out" 2>"$O/place.err" || rc=$?
[ "$rc" != 0 ] || fail "place: removing the secret succeeded"
grep -q "PLACE-$$" "$O/place.out" && fail "place: the secret's content reached the output"
[ -e "$TG_TMP/place/key" ] || fail "place: the secret was removed"
unobserved place | grep -qx "$TG_TMP/place/key" || fail "place: the secret is not listed as unobserved: $(unobserved place)"
echo ok
