#!/bin/sh
# valgrind.sh — txguard under valgrind (memcheck, --leak-check=full) on real
# workloads: the tracer loop on a fork fan-out, a build-like shell loop, a
# denied exec and a rollback; the recovery of a run whose txguard was
# killed; the policy and history subcommands. Prints one line per workload
# and exits 0 when every one ran clean.
#
#   scripts/valgrind.sh [-b BUILDDIR]       (default: build)
#
# valgrind runs txguard (the tracer) on its synthetic CPU, and the child up
# to its exec; with --trace-children=no the command itself runs natively,
# under the filter the child loaded. valgrind 3.19 passes prctl(PR_SET_SECCOMP)
# through but not seccomp(2) nor the Landlock syscalls: txguard loads the
# filter through prctl there (same filter), and the workloads' policy has no
# deny_read rule, so the run goes on without Landlock (the documented
# no-Landlock mode) instead of failing closed.
set -eu

cd "$(dirname "$0")/.."
build=build
[ "${1:-}" = -b ] && { build=$2; shift 2; }
TXGUARD=$build/cmd/txguard
[ -x "$TXGUARD" ] || { echo "valgrind.sh: build txguard first ($TXGUARD missing)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is needed (apt install valgrind)" >&2; exit 2; }
TXGUARD=$(realpath "$TXGUARD")
policy_dir=$(pwd)/policy.d

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-valgrind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/mark"
cat >"$tmp/policy.yaml" <<EOF
version: 1
paths:
  writable: [$tmp/mark]
rules:
  - id: valgrind-deny-exec
    reason: the valgrind workload's forbidden program
    action: deny
    errno: EACCES
    exec:
      program: [forbidden-tool]
EOF
printf '#!/bin/sh\necho ran >"$1"\n' >"$tmp/forbidden-tool"
chmod +x "$tmp/forbidden-tool"

VG="valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --track-fds=no -q"
status=0

fresh_ws() {
	rm -rf "$tmp/ws" "$tmp/state"
	mkdir -p "$tmp/ws/sub"
	for i in 1 2 3 4 5 6 7 8; do echo "file $i" >"$tmp/ws/f$i"; done
	echo deep >"$tmp/ws/sub/x"
}

# vg NAME WANT_RC ARGS...: txguard ARGS under valgrind; WANT_RC the exit the
# workload should have without valgrind in the way.
vg() {
	name=$1 want=$2
	shift 2
	rc=0
	# shellcheck disable=SC2086 # $VG is a command line
	$VG --log-file="$tmp/$name.vg" "$TXGUARD" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
	if [ "$rc" = 99 ] || grep -q '^==[0-9]*== [A-Z]' "$tmp/$name.vg"; then
		echo "$name: NOT CLEAN (valgrind errors, see below)"
		grep -v 'unhandled amd64-linux syscall\|You may be able\|README_MISSING\|Nevertheless we\|it at http' "$tmp/$name.vg" | head -40
		status=1
	elif [ "$name" != "${name#traced-}" ] && [ ! -e "$tmp/mark/ran" ]; then
		echo "$name: FAIL: the command did not get to its end"
		tail -5 "$tmp/$name.out"
		status=1
	elif [ "$rc" != "$want" ]; then
		echo "$name: FAIL: exit $rc, expected $want"
		tail -5 "$tmp/$name.out"
		status=1
	else
		echo "$name: clean"
	fi
	rm -f "$tmp/mark/ran"
}

run() {
	n=$1 w=$2
	shift 2
	vg "$n" "$w" --no-default-policy -p "$tmp/policy.yaml" -q -w "$tmp/ws" --state-dir "$tmp/state" -- "$@"
}

# The tracer loop: names starting with traced- must leave $tmp/mark/ran.
fresh_ws
run traced-fanout 0 sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do (echo "$i" >"g$i"; rm -f "f$((i % 8 + 1))") & done; wait; touch "$1"' sh "$tmp/mark/ran"
[ "$(cat "$tmp/ws/g10" 2>/dev/null)" = 10 ] || { echo "traced-fanout: FAIL: g10 not committed"; status=1; }
fresh_ws
run traced-build-loop 0 sh -c 'for i in $(seq 40); do echo "int x$i;" >s$i.c; cat s$i.c >o$i.o; done; rm s*.c; mkdir -p out && mv o*.o out/; touch "$1"' sh "$tmp/mark/ran"
[ -f "$tmp/ws/out/o40.o" ] || { echo "traced-build-loop: FAIL: out/o40.o not committed"; status=1; }
fresh_ws
run traced-denied-exec 0 sh -c '"$1/forbidden-tool" "$1/mark/ran-forbidden"; [ ! -e "$1/mark/ran-forbidden" ] && touch "$1/mark/ran"' sh "$tmp"
fresh_ws
run traced-rollback 1 sh -c 'for f in f*; do echo x >"$f"; done; rm -r sub; mkdir new; mv f1 new/; touch "$1"; exit 1' sh "$tmp/mark/ran"
{ [ "$(cat "$tmp/ws/f1" 2>/dev/null)" = "file 1" ] && [ -f "$tmp/ws/sub/x" ] && [ ! -e "$tmp/ws/new" ]; } ||
	{ echo "traced-rollback: FAIL: the workspace was not restored"; status=1; }

# The restore of a killed run's journal (no seccomp needed for recover).
fresh_ws
"$TXGUARD" --no-default-policy -p "$tmp/policy.yaml" -q -w "$tmp/ws" --state-dir "$tmp/state" \
	-- sh -c 'for f in f*; do echo x >"$f"; done; rm -r sub; mkdir new; mv f1 new/; sleep 30' &
pid=$!
sleep 1
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
vg recover 0 recover -w "$tmp/ws" --state-dir "$tmp/state"
[ "$(cat "$tmp/ws/f1" 2>/dev/null)" = "file 1" ] || { echo "recover: FAIL: f1 not restored"; status=1; }

# Policy and history subcommands.
vg policy-check 0 policy check --no-default-policy -p "$policy_dir"
# policy explain exits 1 for a deny or kill (0 allow, 2 a bad question).
vg policy-explain 1 policy explain --no-default-policy -p "$policy_dir" -- rm -rf /
fresh_ws
"$TXGUARD" --no-default-policy -p "$tmp/policy.yaml" -q -w "$tmp/ws" --state-dir "$tmp/state" -- sh -c 'echo y >f2; rm f3' || true
TXGUARD_STATE_DIR=$tmp/state vg history-log 0 log -w "$tmp/ws" --json

echo "valgrind: $([ $status = 0 ] && echo clean || echo NOT clean)"
exit $status
