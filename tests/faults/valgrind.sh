#!/bin/sh
# valgrind.sh (test) — txguard under valgrind memcheck on a small tree:
#  1. the tracer loop: `valgrind txguard -- sh -c '...; exit 1'` must run the
#     command under the filter (loaded through prctl: valgrind 3.19 does not
#     pass seccomp(2) through), stay memcheck-clean, and roll the tree back
#     exactly; a committed run in which a write outside the workspace and a
#     denied exec fail with the policy's errno.
#  2. the restore code itself under valgrind: `txguard recover` of a run
#     whose txguard was SIGKILLed: no memory error, no leak, tree restored.
# scripts/valgrind.sh runs more workloads.
. "$(dirname "$0")/lib.sh"
command -v valgrind >/dev/null || skip "valgrind is not installed"
require_runs
VG="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect -q"
ws=$T/ws
st=$T/state
mkdir -p "$ws/sub"
for i in 1 2 3 4 5; do echo "file $i" >"$ws/f$i"; done
ln -s f1 "$ws/link"
echo deep >"$ws/sub/x"
manifest "$ws" >"$T/before"

# --- 1. the tracer loop: a rollback, then denials in a committed run -------
rc=0
$VG --log-file="$T/vg1" "$TXGUARD" --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" \
	-- sh -c 'echo ran; for f in f*; do echo x >"$f"; done; rm -r sub link; mkdir new; exit 1' \
	>"$T/out1" 2>"$T/err1" || rc=$?
[ "$rc" != 99 ] || { cat "$T/vg1" >&2; fail "valgrind found errors in a traced run"; }
[ "$rc" != 125 ] || { cat "$T/err1" "$T/vg1" >&2; fail "the traced run could not start under valgrind"; }
assert_eq "exit of the failed run under valgrind" 1 "$rc"
grep -q ran "$T/out1" || fail "the command did not run"
assert_manifest "after the traced run under valgrind" "$T/before" "$ws"
no_txn "$st"

cat >"$T/vg-policy.yaml" <<'EOF'
version: 1
rules:
  - id: vg-no-tool
    reason: the test's forbidden program
    action: deny
    errno: EACCES
    exec:
      program: [forbidden-tool]
EOF
printf '#!/bin/sh\necho escaped\n' >"$T/forbidden-tool"
chmod +x "$T/forbidden-tool"
outside=$T/outside
rc=0
$VG --log-file="$T/vg1b" "$TXGUARD" -q --no-default-policy -p "$T/vg-policy.yaml" -w "$ws" --state-dir "$st" \
	-- sh -c 'echo new >f9; (echo x >"$1") 2>/dev/null || echo write-refused; "$2" 2>/dev/null || echo exec-refused $?' \
	sh "$outside" "$T/forbidden-tool" >"$T/out1b" 2>"$T/err1b" || rc=$?
[ "$rc" != 99 ] || { cat "$T/vg1b" >&2; fail "valgrind found errors in a traced run with denials"; }
assert_eq "exit of the committed run under valgrind" 0 "$rc"
[ ! -e "$outside" ] || fail "a write outside the workspace went through under valgrind"
grep -qx write-refused "$T/out1b" || fail "the outside write was not refused: $(cat "$T/out1b")"
grep -qx 'exec-refused 126' "$T/out1b" || fail "the denied exec did not fail with EACCES (126): $(cat "$T/out1b")"
! grep -q escaped "$T/out1b" || fail "the denied program ran"
assert_eq "committed file" new "$(cat "$ws/f9")"
rm "$ws/f9"
no_txn "$st"
manifest "$ws" >"$T/before"

# --- 2. the restore under valgrind: recover a killed run's journal -------
(exec "$TXGUARD" -q --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" \
	-- sh -c 'for f in f*; do echo x >"$f"; done; rm -r sub link; mkdir new; mv f2 new/; echo started; sleep 30' >"$T/out2") &
pid=$!
n=0
while ! grep -q started "$T/out2" && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
grep -q started "$T/out2" || { kill -KILL "$pid"; fail "the run to kill never got going"; }
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
rc=0
$VG --log-file="$T/vg2" "$TXGUARD" recover -w "$ws" --state-dir "$st" >"$T/out3" 2>&1 || rc=$?
[ "$rc" != 99 ] || { cat "$T/vg2" >&2; fail "valgrind found errors in the restore (txguard recover)"; }
assert_eq "txguard recover under valgrind" 0 "$rc"
assert_manifest "after recover under valgrind" "$T/before" "$ws"
no_txn "$st"
echo "ok: valgrind clean"
