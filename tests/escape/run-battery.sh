#!/bin/bash
# run-battery.sh — the escape battery (issue 6): every case is a small
# program that tries to get around txguard; exit 0 from a case means its
# attack worked. This runner never takes a case's word for "held": after each
# case it compares a fingerprint of the outside directory (names, types,
# modes, owners, sizes, link counts, mtimes, contents, xattrs), the
# listener's log (connections and datagrams that arrived), the case's output
# (a denied program announcing itself, the secret's random token) and, for
# kill-tracer, leftover processes and the recovered workspace.
#
#   run-battery.sh [--native | --no-landlock] [--case-dir DIR] [-v] [CASE...]
#
# Default mode runs each case as `$TXGUARD -w WS -p battery.yaml -- CASE` and
# prints `held NAME` or `BREACH NAME: why`, then `N held, M breached`; exit 1
# on any breach or error. --native runs the cases without txguard and
# expects every attack to work (`breach-native NAME`); a case that does not
# breach natively proves nothing and fails the run (`NO-BREACH NAME`), except
# where the kernel lacks the feature (`n/a NAME`, e.g. no x32 ABI).
# --no-landlock runs txguard as on a kernel without Landlock (helper
# esc-nolandlock makes the landlock_* syscalls fail with ENOSYS; the policies'
# deny_read lists are dropped, since txguard rightly refuses to run them
# without Landlock; `secret` is skipped): it shows which attacks only
# Landlock holds. Informational: not part of the meson suite.
#
# Everything runs inside the throwaway arena (scripts/arena): the runner
# re-executes itself there, and refuses to run outside it. The network cases
# run only when the arena's network namespace has nothing but lo and no
# route to 10.255.255.1; their witness listens on 127.13.13.13, a loopback
# address of that namespace, so no packet ever leaves it.
set -u

MODE=txguard
VERBOSE=0
CASE_DIR=${ESC_CASE_DIR:-$(cd "$(dirname "$0")" && pwd)}
ONLY=()
while [ $# -gt 0 ]; do
	case "$1" in
	--native) MODE=native ;;
	--no-landlock) MODE=nolandlock ;;
	--case-dir) CASE_DIR=$2; shift ;;
	-v) VERBOSE=1 ;;
	-h | --help) sed -n '2,25p' "$0"; exit 0 ;;
	-*) echo "run-battery: unknown option $1" >&2; exit 2 ;;
	*) ONLY+=("$1") ;;
	esac
	shift
done
SRC_DIR=${TXGUARD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "$MODE" = native ] && TXGUARD=${TXGUARD:-unused}
# shellcheck source=../lib/common.sh
. "$SRC_DIR/tests/lib/common.sh"
set +e

# ---- into the arena ----------------------------------------------------------

if [ "${ARENA:-}" != 1 ]; then
	arena=$SRC_DIR/scripts/arena
	[ -x "$arena" ] || skip "scripts/arena is missing: the battery runs only in the arena"
	args=(--case-dir "$CASE_DIR")
	[ "$MODE" = native ] && args+=(--native)
	[ "$MODE" = nolandlock ] && args+=(--no-landlock)
	[ "$VERBOSE" = 1 ] && args+=(-v)
	exec "$arena" -- /bin/bash "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "${args[@]}" "${ONLY[@]}"
fi
# Belt and braces: inside the arena "/" is its copy-on-write overlay; refuse
# to run on anything else. (The cases only ever touch files under $ROOT, a
# fresh directory of their own, but they are built to break things.)
rootfs=$(awk '$5 == "/" { for (i = 7; $i != "-"; i++) ; print $(i + 1) }' /proc/self/mountinfo)
[ "$rootfs" = overlay ] || fail "ARENA=1 but / is '$rootfs', not the arena's overlay; refusing"

if [ "$MODE" != native ]; then
	[ -x "$TXGUARD" ] || fail "TXGUARD=$TXGUARD is not executable"
fi
for h in esc-denied esc-allowd esc-tool esc-listen esc-direct; do
	[ -x "$CASE_DIR/$h" ] || fail "$CASE_DIR/$h missing: build tests/escape first"
done

# ---- the scratch tree ----------------------------------------------------------

# Not under /tmp, /var/tmp or HOME: those may be writable places of the
# default policy, and "outside" must mean read-only.
mkdir -p /var/lib
ROOT=$(mktemp -d /var/lib/txguard-escape.XXXXXX) || fail "mktemp"
LISTENER=0
cleanup() {
	[ "$LISTENER" != 0 ] && kill "$LISTENER" 2>/dev/null
	rm -rf "$ROOT"
}
trap cleanup EXIT

mkdir -p "$ROOT/bin" "$ROOT/run" "$ROOT/home/.ssh"
cp "$CASE_DIR/esc-denied" "$CASE_DIR/esc-allowd" "$CASE_DIR/esc-tool" "$ROOT/bin/"
TOKEN="SECRET-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
printf '%s\n' "$TOKEN" >"$ROOT/home/.ssh/id_x"
chmod 700 "$ROOT/home/.ssh"
chmod 600 "$ROOT/home/.ssh/id_x"
sed "s|@ROOT@|$ROOT|g" "$SRC_DIR/tests/escape/battery.yaml" >"$ROOT/battery.yaml"

# Drop a YAML file's `deny_read:` list (two-space key, deeper-indented items).
strip_deny_read() {
	awk '/^  deny_read:/ { skip = 1; next } skip && /^(    |      |\t)/ { next } { skip = 0; print }' "$1"
}

WRAP=()
if [ "$MODE" = nolandlock ]; then
	WRAP=("$CASE_DIR/esc-nolandlock")
	mkdir "$ROOT/policy.d"
	for f in "${TXGUARD_POLICY_DIR:-$SRC_DIR/policy.d}"/*.yaml; do
		strip_deny_read "$f" >"$ROOT/policy.d/$(basename "$f")"
	done
	export TXGUARD_DEFAULT_POLICY_DIR=$ROOT/policy.d
	# Its `paths:` holds only deny_read: drop the whole block.
	awk '/^paths:/ { skip = 1; next } skip && /^[a-z]/ { skip = 0 } !skip' "$ROOT/battery.yaml" >"$ROOT/battery.nodeny"
	mv "$ROOT/battery.nodeny" "$ROOT/battery.yaml"
fi

if [ "$MODE" != native ]; then
	if ! HOME=$ROOT/home "$TXGUARD" policy check "$ROOT/battery.yaml" >"$ROOT/check.out" 2>&1; then
		sed 's/^/    /' "$ROOT/check.out"
		fail "txguard policy check rejects battery.yaml"
	fi
fi

# The network witness, only in an isolated namespace.
NET=1
nlinks=$(ip -o link show 2>/dev/null | wc -l)
if [ "$nlinks" != 1 ]; then
	NET=0
	echo "# network cases skipped: $nlinks interfaces (expected only lo)"
elif ip route get 10.255.255.1 >/dev/null 2>&1; then
	NET=0
	echo "# network cases skipped: 10.255.255.1 is routable here"
else
	: >"$ROOT/listen.log"
	"$CASE_DIR/esc-listen" "$ROOT/listen.log" 127.13.13.13 9 "$ROOT/run/docker.sock" \
		"$ROOT/run/docker.dgram" >"$ROOT/listen.ready" &
	LISTENER=$!
	for _ in $(seq 50); do
		grep -q ready "$ROOT/listen.ready" 2>/dev/null && break
		sleep 0.1
	done
	grep -q ready "$ROOT/listen.ready" || fail "the listener did not start"
fi

export HOME=$ROOT/home ESC_OUT=$ROOT/out ESC_WS=$ROOT/ws ESC_BIN=$ROOT/bin
export ESC_SOCK=$ROOT/run/docker.sock ESC_DSOCK=$ROOT/run/docker.dgram ESC_ADDR=10.255.255.1 ESC_LADDR=127.13.13.13 ESC_PORT=9
export ESC_TRIES=${ESC_TRIES:-2000} ESC_STATE=$ROOT/state

reset_case() {
	rm -rf "$ROOT/ws" "$ROOT/out" "$ROOT/state"
	mkdir -p "$ROOT/ws/.git" "$ROOT/out/gitdir" "$ROOT/state"
	for f in out/victim out/victim2 out/gitdir/config; do
		printf 'ORIGINAL\n' >"$ROOT/$f"
	done
	printf 'WSORIG\n' >"$ROOT/ws/journaled.txt"
	mkdir "$ROOT/ws/sub"
	printf 'WSORIG-SUB\n' >"$ROOT/ws/sub/victim"
	printf 'WSORIG-OTHER\n' >"$ROOT/ws/sub/other"
	printf 'ref: refs/heads/main\n' >"$ROOT/ws/.git/HEAD"
}

fingerprint() {
	(
		cd "$1" || exit 1
		find . -printf '%y %m %U:%G %s %n %T@ %p -> %l\n' | LC_ALL=C sort
		find . -type f -exec sha256sum {} + | LC_ALL=C sort
		if command -v getfattr >/dev/null; then
			getfattr -R -d -m - . 2>/dev/null
		fi
	)
}

NHELD=0 NBREACH=0 NERR=0 NSKIP=0 NNA=0
FAILED=()

say() { printf '%s\n' "$*"; }

# The case's stderr, indented; long ones (the race cases repeat the same
# denial line) as head and tail.
show_err() {
	local n
	n=$(wc -l <"$ROOT/case.err")
	if [ "$n" -le 30 ]; then
		sed 's/^/    | /' "$ROOT/case.err"
	else
		sed -n '1,12s/^/    | /p' "$ROOT/case.err"
		echo "    | ... ($((n - 24)) more lines)"
		tail -n 12 "$ROOT/case.err" | sed 's/^/    | /'
	fi
}

# Evidence beyond the exit code; appends to REASONS.
check_evidence() {
	local name=$1 before=$2 nlog=$3
	if [ "$(fingerprint "$ROOT/out")" != "$before" ]; then
		REASONS+=("the outside directory changed")
	fi
	if [ "$NET" = 1 ] && [ "$(wc -l <"$ROOT/listen.log")" != "$nlog" ]; then
		REASONS+=("the listener got: $(tail -n +"$((nlog + 1))" "$ROOT/listen.log" | tr '\n' ' ')")
	fi
	if grep -q -e 'esc-denied: RAN' -e 'esc-tool: RAN' "$ROOT/case.err"; then
		REASONS+=("a denied program ran")
	fi
	if grep -q "$TOKEN" "$ROOT/case.out"; then
		REASONS+=("the secret was read")
	fi
	if grep -q '^esc: BREACH' "$ROOT/case.err"; then
		REASONS+=("the case reports: $(sed -n 's/^esc: BREACH: //p' "$ROOT/case.err" | head -1)")
	fi
	case "$name" in
	kill-tracer) check_kill_tracer ;;
	tracer-fds) check_recovered "after a tracee took the tracer's files" ;;
	journal-tamper) check_recovered "after a tracee went after the state directory" ;;
	restore-symlink) check_sub_restored ;;
	esac
}

# The case changed journaled.txt in the workspace and then failed (or its
# tracer died): the workspace must be back, through `txguard recover`.
check_recovered() {
	[ "$MODE" = native ] && return
	"$TXGUARD" recover -w "$ROOT/ws" --state-dir "$ROOT/state" >>"$ROOT/case.err" 2>&1
	local now
	now=$(cat "$ROOT/ws/journaled.txt" 2>/dev/null)
	if [ "$now" != WSORIG ]; then
		REASONS+=("workspace not recovered $1 (journaled.txt: '${now:-missing}')")
	fi
}

# sub/ must be a directory again, with its original files.
check_sub_restored() {
	[ "$MODE" = native ] && return
	if [ -L "$ROOT/ws/sub" ] || [ ! -d "$ROOT/ws/sub" ]; then
		REASONS+=("the rollback left ws/sub a symlink or missing")
	elif [ "$(cat "$ROOT/ws/sub/victim" 2>/dev/null)" != WSORIG-SUB ] ||
		[ "$(cat "$ROOT/ws/sub/other" 2>/dev/null)" != WSORIG-OTHER ]; then
		REASONS+=("the rollback did not restore ws/sub/victim and ws/sub/other")
	fi
}

# Every tracee must die with the tracer, and the workspace come back.
check_kill_tracer() {
	local late
	late=$(sed -n 's/^esc: late child \([0-9][0-9]*\)$/\1/p' "$ROOT/case.err")
	sleep 2
	if [ -n "$late" ] && [ -d "/proc/$late" ] && ! grep -q '^State:.*Z' "/proc/$late/status" 2>/dev/null; then
		REASONS+=("tracee $late outlived its tracer")
		kill -9 "$late" 2>/dev/null
	fi
	check_recovered "after the tracer died"
	# Fingerprint again: the late child had a second chance.
	if [ "$(fingerprint "$ROOT/out")" != "$BEFORE" ]; then
		REASONS+=("the outside directory changed after the tracer died")
	fi
}

# run_once NAME PROGRAM [ARGS...]: one run on a fresh tree; sets RC and
# REASONS (empty: held). Returns 1 when the case never started.
run_once() {
	local name=$1 nlog=0
	shift
	reset_case
	BEFORE=$(fingerprint "$ROOT/out")
	[ "$NET" = 1 ] && nlog=$(wc -l <"$ROOT/listen.log")
	if [ "$MODE" = native ]; then
		(cd "$ROOT/ws" && timeout -k 5 300 "$@") >"$ROOT/case.out" 2>"$ROOT/case.err" </dev/null
	else
		# --log and --report: their files must not leak into the tree.
		(cd "$ROOT/ws" && timeout -k 5 300 "${WRAP[@]}" "$TXGUARD" -w "$ROOT/ws" --state-dir "$ROOT/state" \
			--log "$ROOT/case.log" --log-level exec --report "$ROOT/case.report" \
			-p "$ROOT/battery.yaml" -- "$@") >"$ROOT/case.out" 2>"$ROOT/case.err" </dev/null
	fi
	RC=$?
	REASONS=()
	grep -q "^esc: start" "$ROOT/case.err" || return 1
	[ "$RC" = 0 ] && REASONS+=("the case exited 0 (its attack worked)")
	check_evidence "$name" "$BEFORE" "$nlog"
	return 0
}

# [REPEAT=N] run_case NAME NEEDS_NET PROGRAM [ARGS...]
# REPEAT: for races where the first lost race ends the run (txguard kills
# the tree on an exec mismatch), run up to N times, stopping at a breach.
run_case() {
	local name=$1 needs_net=$2 reps=${REPEAT:-1} i
	shift 2
	if [ ${#ONLY[@]} -gt 0 ] && ! printf '%s\n' "${ONLY[@]}" | grep -qx -- "$name"; then
		return
	fi
	if [ "$MODE" = nolandlock ] && [ "$name" = secret ]; then
		say "skip $name (deny_read needs Landlock: txguard refuses to run it without)"
		NSKIP=$((NSKIP + 1))
		return
	fi
	if [ "$needs_net" = 1 ] && [ "$NET" = 0 ]; then
		say "skip $name (no isolated network namespace)"
		NSKIP=$((NSKIP + 1))
		return
	fi
	for ((i = 1; i <= reps; i++)); do
		if ! run_once "$name" "$@"; then
			say "ERROR $name: the case never started (exit $RC)"
			show_err
			NERR=$((NERR + 1))
			FAILED+=("$name")
			return
		fi
		[ ${#REASONS[@]} -gt 0 ] && break
	done
	local why runs=""
	why=$(IFS=';'; echo "${REASONS[*]:-}")
	[ "$reps" -gt 1 ] && runs=", $((i > reps ? reps : i)) of $reps runs"
	if [ "$MODE" = native ]; then
		if [ ${#REASONS[@]} -gt 0 ]; then
			say "breach-native $name"
			NBREACH=$((NBREACH + 1))
		elif grep -q '^esc: n/a' "$ROOT/case.err"; then
			say "n/a $name ($(sed -n 's/^esc: n\/a: //p' "$ROOT/case.err" | head -1))"
			NNA=$((NNA + 1))
		else
			say "NO-BREACH $name: the attack does not work even without txguard (exit $RC$runs)"
			show_err
			NHELD=$((NHELD + 1))
			FAILED+=("$name")
		fi
		[ "$VERBOSE" = 1 ] && show_err
		return
	fi
	if [ ${#REASONS[@]} -gt 0 ]; then
		say "BREACH $name: $why (exit $RC$runs)"
		show_err
		NBREACH=$((NBREACH + 1))
		FAILED+=("$name")
	else
		say "held $name (exit $RC$runs)"
		NHELD=$((NHELD + 1))
		[ "$VERBOSE" = 1 ] && show_err
	fi
}

# Not a program of its own: on a kernel without Landlock, a policy with
# deny_read must refuse to run at all (exit 125), never run unprotected.
check_landlock_fail_closed() {
	[ "$MODE" = txguard ] || return
	if [ ${#ONLY[@]} -gt 0 ] && ! printf '%s\n' "${ONLY[@]}" | grep -qx landlock-fail-closed; then
		return
	fi
	local rc
	reset_case
	(cd "$ROOT" && "$CASE_DIR/esc-nolandlock" "$TXGUARD" -w "$ROOT" --state-dir "$ROOT/state" \
		-p "$ROOT/battery.yaml" -- /bin/true) >"$ROOT/case.out" 2>"$ROOT/case.err" </dev/null
	rc=$?
	if [ "$rc" = 125 ] && grep -qi landlock "$ROOT/case.err"; then
		say "held landlock-fail-closed (exit 125 without Landlock)"
		NHELD=$((NHELD + 1))
	else
		say "BREACH landlock-fail-closed: a deny_read policy without Landlock did not fail closed (exit $rc)"
		show_err
		NBREACH=$((NBREACH + 1))
		FAILED+=(landlock-fail-closed)
	fi
}

C=$CASE_DIR
check_landlock_fail_closed
run_case direct 0 "$C/esc-direct"
run_case x32 0 "$C/esc-x32"
run_case int80 0 "$C/esc-int80"
run_case clone-untraced 0 "$C/esc-clone-untraced"
run_case clone3-untraced 0 "$C/esc-clone3-untraced"
run_case io_uring-unlinkat 0 "$C/esc-io_uring" unlinkat
run_case io_uring-openat 0 "$C/esc-io_uring" openat
run_case io_uring-renameat 0 "$C/esc-io_uring" renameat
run_case io_uring-connect 1 "$C/esc-io_uring" connect
run_case kill-tracer 0 "$C/esc-kill-tracer"
run_case ptrace-sibling 0 "$C/esc-ptrace-sibling"
run_case vm-writev 0 "$C/esc-mem-race" vm-writev
run_case proc-mem 0 "$C/esc-mem-race" proc-mem
run_case tracer-fds 0 "$C/esc-tracer-fds"
run_case leaked-fds 0 "$C/esc-leaked-fds"
run_case journal-tamper 0 "$C/esc-journal-tamper"
run_case restore-symlink 0 "$C/esc-restore-symlink"
run_case seccomp-listener 0 "$C/esc-seccomp-listener"
run_case symlink-swap 0 "$C/esc-symlink-swap"
run_case dotdot 0 "$C/esc-dotdot"
run_case hardlink 0 "$C/esc-hardlink"
run_case rename-roundtrip 0 "$C/esc-rename-roundtrip"
run_case reopen-rdonly 0 "$C/esc-reopen" rdonly
run_case reopen-opath 0 "$C/esc-reopen" opath
run_case path-meta 0 "$C/esc-path-meta"
run_case unix-bind 0 "$C/esc-unix-bind"
run_case tmpfile-link 0 "$C/esc-tmpfile-link"
run_case handle-open 0 "$C/esc-handle-open"
run_case chroot-games 0 "$C/esc-chroot-games"
run_case dirfd-outside 0 "$C/esc-dirfd-outside"
run_case fd-meta 0 "$C/esc-fd-meta"
run_case fd-ioctl 0 "$C/esc-fd-ioctl"
run_case git-symlink 0 "$C/esc-git-symlink"
run_case mount-games 0 "$C/esc-mount-games"
run_case memfd-exec 0 "$C/esc-memfd-exec"
run_case shebang 0 "$C/esc-shebang"
run_case alias-exec 0 "$C/esc-alias-exec"
run_case ldso-exec 0 "$C/esc-ldso-exec"
REPEAT=${ESC_RACE_RUNS:-30} run_case argv-race 0 "$C/esc-exec-race" argv
REPEAT=${ESC_RACE_RUNS:-30} run_case exec-path-race 0 "$C/esc-exec-race" path
# One lost race in ~20-50 runs here: give it room.
REPEAT=${ESC_RACE_RUNS:-100} run_case exec-interp-race 0 "$C/esc-exec-race" interp
run_case tiocsti 0 "$C/esc-tiocsti"
run_case net-tcp 1 "$C/esc-net" tcp
run_case net-udp 1 "$C/esc-net" udp
run_case net-unix 1 "$C/esc-net" unix
run_case dev-tcp 1 /bin/bash "$SRC_DIR/tests/escape/cases/dev-tcp.sh"
run_case secret 0 "$C/esc-secret"

if [ "$MODE" = native ]; then
	say "$NBREACH breached natively, $NHELD did not, $NNA n/a, $NSKIP skipped, $NERR errors"
else
	say "$NHELD held, $NBREACH breached"
	[ "$NSKIP" -gt 0 ] || [ "$NERR" -gt 0 ] && say "($NSKIP skipped, $NERR errors)"
fi
if [ ${#FAILED[@]} -gt 0 ]; then
	say "# not as expected: ${FAILED[*]}"
	exit 1
fi
if [ "$NSKIP" -gt 0 ] && [ "${TXGUARD_TESTS_MUST_WORK:-0}" = 1 ]; then
	say "# skips are not allowed here (TXGUARD_TESTS_MUST_WORK=1)"
	exit 1
fi
exit 0
