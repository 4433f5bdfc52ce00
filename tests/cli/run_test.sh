#!/bin/sh
# run_test.sh — `txguard -- CMD` end to end: the exit-code contract, commit
# and rollback on the workspace, the denial line on stderr, setup failures.
# Nothing here is destructive: every target is in this test's temp dir.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
ws="$TG_TMP/ws"
# /tmp (where CI may clone the project) and the caches are writable under
# the default policy; $HOME itself is not, so "outside" lives there.
outside=$(mktemp -d "${HOME:?}/.txguard-test-outside.XXXXXX")
trap 'rm -rf "$TG_TMP" "$outside"' EXIT
mkdir -p "$ws/src"
export TXGUARD_STATE_DIR="$TG_TMP/state"
printf 'hello\n' >"$ws/notes.txt"
printf 'int main(void){return 0;}\n' >"$ws/src/main.c"
chmod 640 "$ws/notes.txt"

"$TXGUARD" doctor >/dev/null 2>&1 || skip "txguard doctor: this kernel forbids what txguard needs"
# The default policy (deny_read included) must run; where the kernel has no
# Landlock, txguard refuses it by design and this test has nothing to test.
TXGUARD_STATE_DIR="$TG_TMP/probe-state" "$TXGUARD" -q -w "$ws" -- true >/dev/null 2>"$TG_TMP/probe.err" ||
	tg_cannot_run "$TG_TMP/probe.err"
rm -rf "$TG_TMP/probe-state"

tg() { "$TXGUARD" -q -w "$ws" "$@"; }
code() { rc=0; "$@" || rc=$?; echo "$rc"; }

# --- exit codes ---
assert_eq "exit 0" 0 "$(code tg -- true)"
assert_eq "exit 1" 1 "$(code tg -- false)"
assert_eq "exit 255" 255 "$(code tg -- sh -c 'exit 255')"
assert_eq "SIGTERM" 143 "$(code tg -- sh -c 'kill -TERM $$')"
assert_eq "SIGKILL" 137 "$(code tg -- sh -c 'kill -KILL $$')"
assert_eq "not found" 127 "$(code tg -- /nonexistent/cmd)"
printf 'not executable\n' >"$TG_TMP/noexec"
chmod 644 "$TG_TMP/noexec"
assert_eq "not executable" 126 "$(code tg -- "$TG_TMP/noexec")"
assert_eq "bad option (a usage error)" 2 "$(code tg --timeout soon -- true)"
assert_eq "missing workspace" 125 "$(code "$TXGUARD" -q -w "$TG_TMP/nope" -- true)"

# --- a failing command is rolled back byte for byte ---
before=$(cd "$ws" && find . -printf '%p %y %m %s\n' | sort; cat notes.txt src/main.c)
assert_eq "rollback exit" 3 "$(code tg -- sh -c 'rm -rf src; echo oops > notes.txt; touch junk; mkdir d; exit 3')"
after=$(cd "$ws" && find . -printf '%p %y %m %s\n' | sort; cat notes.txt src/main.c)
assert_eq "workspace restored" "$before" "$after"

# --- a successful command commits ---
assert_eq "commit exit" 0 "$(code tg -- sh -c 'echo world >> notes.txt; touch new')"
assert_eq "committed content" "hello
world" "$(cat "$ws/notes.txt")"
[ -e "$ws/new" ] || fail "created file not committed"

# --- --rollback-on ---
assert_eq "codes: 1 is not failure" 1 "$(code tg --rollback-on 2 -- sh -c 'touch kept; exit 1')"
[ -e "$ws/kept" ] || fail "--rollback-on 2 rolled back an exit 1"
assert_eq "always" 0 "$(code tg --rollback-on always -- sh -c 'touch gone')"
[ ! -e "$ws/gone" ] || fail "--rollback-on always did not roll back"

# --- a write outside the workspace is denied with the rule on stderr ---
rc=0
"$TXGUARD" -w "$ws" -- sh -c "echo x > '$outside/stolen'" 2>"$TG_TMP/err" || rc=$?
[ "$rc" -ne 0 ] || fail "write outside the workspace succeeded"
[ ! -e "$outside/stolen" ] || fail "a file was created outside the workspace"
grep -q "txguard: denied" "$TG_TMP/err" || fail "no denial line on stderr: $(cat "$TG_TMP/err")"

# --- a mutation the journal cannot undo (inode flags) is refused ---
if command -v chattr >/dev/null && chattr -A "$ws/notes.txt" 2>/dev/null; then
	rc=0
	"$TXGUARD" -w "$ws" -- chattr +A notes.txt 2>"$TG_TMP/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "chattr +A succeeded under txguard"
	grep -q "txguard.unjournaled" "$TG_TMP/err" || fail "no unjournaled denial: $(cat "$TG_TMP/err")"
	case "$(lsattr -d "$ws/notes.txt" 2>/dev/null | cut -d' ' -f1)" in
	*A*) fail "the noatime flag was set despite the denial" ;;
	esac
fi

# --- the journal does not show up in the workspace ---
[ -z "$(ls -A "$ws" | grep -v -e '^notes.txt$' -e '^src$' -e '^new$' -e '^kept$')" ] ||
	fail "txguard left files in the workspace: $(ls -A "$ws")"

# --- a state dir inside a writable place: the place stays writable, the
# state dir does not (Landlock cannot hide it there; the tracer does) ---
rc=0
"$TXGUARD" -q -w "$ws" --state-dir "$TG_TMP/st2" -- sh -c \
	"touch '$TG_TMP/beside' && echo x > '$TG_TMP/st2/evil'" 2>/dev/null || rc=$?
[ -e "$TG_TMP/beside" ] || fail "a state dir under /tmp made /tmp unwritable"
[ ! -e "$TG_TMP/st2/evil" ] || fail "the command wrote into txguard's state dir"
[ "$rc" -ne 0 ] || fail "a write into the state dir did not fail"

# --- terminals: the default policy lets a command open a pty ---
if command -v python3 >/dev/null; then
	"$TXGUARD" -q -w "$ws" -- python3 -c 'import os; os.openpty()' || fail "os.openpty() refused"
fi

# --- the workspace's own policy applies, and the command cannot edit it ---
cat >"$ws/.txguard.yaml" <<'YAML'
rules:
  - id: no-uname
    reason: this workspace forbids uname
    action: deny
    exec:
      program: [uname]
YAML
rc=0
"$TXGUARD" -w "$ws" -- uname -a 2>"$TG_TMP/err" || rc=$?
grep -q "no-uname" "$TG_TMP/err" || fail "the workspace policy was not applied: $(cat "$TG_TMP/err")"
"$TXGUARD" policy explain -w "$ws" -- uname -a | grep -q "no-uname" || fail "explain ignores the workspace policy"
for cmd in 'echo "rules: []" > .txguard.yaml' 'rm .txguard.yaml' 'mv .txguard.yaml x' 'chmod 600 .txguard.yaml'; do
	rc=0
	"$TXGUARD" -q -w "$ws" -- sh -c "$cmd" || rc=$?
	[ "$rc" -ne 0 ] || fail "'$cmd' on the workspace policy succeeded"
	grep -q "no-uname" "$ws/.txguard.yaml" || fail "'$cmd' changed the workspace policy"
done
rm "$ws/.txguard.yaml"

# --- a PATH search (env, xargs and glibc's execvp try each entry): the
# misses fail with ENOENT as the kernel's would, unjudged; the program found
# is judged, once ---
printf 'version: 1\nrules:\n  - id: no-uname\n    action: deny\n    reason: test\n    exec:\n      program: [uname]\n' \
	>"$TG_TMP/uname.yaml"
mkdir -p "$TG_TMP/emptybin"
rc=0
"$TXGUARD" -w "$ws" -p "$TG_TMP/uname.yaml" --report "$TG_TMP/path.json" -- \
	env PATH="$TG_TMP/nobin:$TG_TMP/emptybin:/usr/bin:/bin" uname -a >/dev/null 2>"$TG_TMP/err" || rc=$?
assert_eq "denied uname found late in PATH: exit" 126 "$rc"
grep -q '"count": *1[,}]' "$TG_TMP/path.json" || fail "the PATH search's misses were judged: $(cat "$TG_TMP/path.json")"
grep -Eq '"path": *"(/usr)?/bin/uname"' "$TG_TMP/path.json" || fail "the decision does not name the program found: $(cat "$TG_TMP/path.json")"
rc=0
"$TXGUARD" -w "$ws" -- env PATH="$TG_TMP/nobin:$TG_TMP/emptybin" uname 2>"$TG_TMP/err" || rc=$?
assert_eq "a program in no PATH entry: exit" 127 "$rc"
grep -q "No such file" "$TG_TMP/err" || fail "env did not see ENOENT: $(cat "$TG_TMP/err")"

# --- txguard's own PATH search (done before the filter, as execvp would):
# a directory or a file we may not execute named like the program is
# passed over; a script without #! still runs through sh ---
mkdir -p "$TG_TMP/pathdirs/a/tg-prog" "$TG_TMP/pathdirs/b" "$TG_TMP/pathdirs/c"
printf '#!/bin/sh\necho wrong\n' >"$TG_TMP/pathdirs/b/tg-prog"
chmod 644 "$TG_TMP/pathdirs/b/tg-prog"
printf 'echo "right $1"\n' >"$TG_TMP/pathdirs/c/tg-prog"
chmod 755 "$TG_TMP/pathdirs/c/tg-prog"
rc=0
out=$(PATH="$TG_TMP/pathdirs/a:$TG_TMP/pathdirs/b:$TG_TMP/pathdirs/c:$PATH" "$TXGUARD" -q -w "$ws" -- tg-prog x 2>"$TG_TMP/err") || rc=$?
assert_eq "PATH search: exit" 0 "$rc"
assert_eq "PATH search: the program run" "right x" "$out"

# --- the command runs on the CPUs txguard was given (its start is pinned to
# the tracer's CPU until the first exec, then released) ---
want=$(grep Cpus_allowed_list /proc/self/status)
assert_eq "the command's CPUs" "$want" "$("$TXGUARD" -q -w "$ws" -- grep Cpus_allowed_list /proc/self/status)"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	assert_eq "the command's CPUs under taskset" "$(taskset -c 1 grep Cpus_allowed_list /proc/self/status)" \
		"$(taskset -c 1 "$TXGUARD" -q -w "$ws" -- grep Cpus_allowed_list /proc/self/status)"
fi

# A command alone that traps in quick succession runs on the tracer's CPU,
# but asking where it runs tells the CPUs it was given (the tracer's tests,
# tracer-pinning, check the rest).
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
case $mine in
*[,-]*)
	: >"$ws/pinme"
	out=$(cd "$ws" && "$TXGUARD" -q -w "$ws" -- "$TXGUARD_BUILD_DIR/tests/tracer/affinity" get pinme)
	case $out in "pinned "*) ;; *) fail "a busy command alone was never pinned: $out" ;; esac
	assert_eq "sched_getaffinity of a pinned command" "get $mine" "$(echo "$out" | sed -n 2p)"
	rm -f "$ws/pinme" ;;
esac

# --- the policy cache: used, and out of the command's reach ---
xdg="$TG_TMP/xdg"
cache="$xdg/txguard/policy-cache"
mkdir -p "$xdg"
XDG_STATE_HOME="$xdg" tg -- true
n=$(find "$cache" -name '*.tree' | wc -l)
[ "$n" -ge 5 ] || fail "the policy cache holds $n entries after a run (want one per policy file)"
# A second run must read the same entries, not add to them.
XDG_STATE_HOME="$xdg" tg -- true
assert_eq "cache entries after a second run" "$n" "$(find "$cache" -name '*.tree' | wc -l)"
victim=$(find "$cache" -name '*.tree' | head -1)
sum=$(cksum <"$victim")
for cmd in "echo x > '$cache/planted.tree'" "echo x >> '$victim'" "rm -f '$victim'" "mv '$victim' '$cache/x'"; do
	rc=0
	XDG_STATE_HOME="$xdg" "$TXGUARD" -w "$ws" --report "$TG_TMP/cache.json" -- sh -c "$cmd" 2>"$TG_TMP/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "'$cmd' in the policy cache succeeded"
	grep -q "state-dir" "$TG_TMP/err" || fail "'$cmd': no state-dir refusal: $(cat "$TG_TMP/err")"
	grep -q '"rule": *"state-dir"' "$TG_TMP/cache.json" || fail "'$cmd': no state-dir decision in the report"
done
[ ! -e "$cache/planted.tree" ] || fail "the command planted a file in the policy cache"
assert_eq "the cached entry is untouched" "$sum" "$(cksum <"$victim")"
# Off: nothing is cached.
rm -rf "$xdg"
mkdir -p "$xdg"
TXGUARD_POLICY_CACHE=0 XDG_STATE_HOME="$xdg" tg -- true
[ ! -e "$cache" ] || fail "TXGUARD_POLICY_CACHE=0 still wrote the cache"

# --- the main process sets its own /proc/PID coredump_filter and comm (a JVM
# does at start): no refusal; any other process still meets the default ---
rc=0
"$TXGUARD" -w "$ws" --report "$TG_TMP/proc.json" -- sh -c \
	'echo 0x33 > /proc/self/coredump_filter && printf tg-main > /proc/self/comm && cat /proc/self/coredump_filter' \
	>"$TG_TMP/out" 2>"$TG_TMP/err" || rc=$?
assert_eq "own coredump_filter: exit" 0 "$rc"
assert_eq "own coredump_filter: set" 00000033 "$(cat "$TG_TMP/out")"
grep -q '"decisions": *\[\]' "$TG_TMP/proc.json" || fail "own /proc writes made decisions: $(cat "$TG_TMP/err")"
for cmd in '(echo 0x33 > /proc/self/coredump_filter)' 'echo 0x33 > /proc/$PPID/coredump_filter' \
	'echo 0 > /proc/self/oom_score_adj'; do
	rc=0
	"$TXGUARD" -w "$ws" -- sh -c "$cmd" 2>"$TG_TMP/err" || rc=$?
	[ "$rc" -ne 0 ] || fail "'$cmd' succeeded"
	grep -q "read-only-outside-workspace" "$TG_TMP/err" || fail "'$cmd': no decision: $(cat "$TG_TMP/err")"
done
if command -v mvn >/dev/null; then
	rc=0
	(cd "$ws" && "$TXGUARD" --report "$TG_TMP/mvn.json" -- mvn -v) >/dev/null 2>"$TG_TMP/err" || rc=$?
	assert_eq "mvn -v: exit" 0 "$rc"
	grep -q '"decisions": *\[\]' "$TG_TMP/mvn.json" || fail "mvn -v made decisions: $(cat "$TG_TMP/err")"
fi

# --- a broken policy: nothing runs ---
printf 'rules:\n  - id: x\n    action: explode\n' >"$TG_TMP/bad.yaml"
rc=0
"$TXGUARD" -w "$ws" -p "$TG_TMP/bad.yaml" -- touch "$ws/should-not-exist" 2>"$TG_TMP/err" || rc=$?
assert_eq "bad policy exit" 125 "$rc"
[ ! -e "$ws/should-not-exist" ] || fail "command ran despite a bad policy"
grep -q "bad.yaml:[0-9]*:[0-9]*:" "$TG_TMP/err" || fail "policy error lacks file:line:col: $(cat "$TG_TMP/err")"
echo "ok"
