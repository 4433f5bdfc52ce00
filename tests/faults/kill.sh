#!/bin/sh
# kill.sh — txguard itself dies (SIGKILL, or SIGSEGV as a crash would) at
# random points of a run, and in the middle of a restore:
#   - every traced process is gone right after (PTRACE_O_EXITKILL), checked
#     by the pids the tree printed;
#   - `txguard recover`, or simply the next `txguard -- true` on the same
#     workspace, gives back the workspace's original manifest;
#   - nothing unfinished stays in the state dir.
# TG_FAULTS_ITERS (default 30) kills during runs, TG_FAULTS_RESTORE_ITERS
# (default 8) kills during restores; TG_FAULTS_SEED picks the delays;
# TG_FAULTS_KEEP=DIR keeps the last killed journal and workspace there.
. "$(dirname "$0")/lib.sh"
require_runs
# shellcheck disable=SC3045 # dash and bash both have ulimit -c
ulimit -c 0 # the SIGSEGV case must not leave core files around

iters=${TG_FAULTS_ITERS:-30}
riters=${TG_FAULTS_RESTORE_ITERS:-8}
seed=${TG_FAULTS_SEED:-$(date +%s)}
echo "seed=$seed iters=$iters restore_iters=$riters"
ws=$T/ws
st=$T/state

fresh_ws() {
	rm -rf "$ws"
	mkdir -p "$ws/sub/deep"
	i=0
	while [ $i -lt "$1" ]; do
		printf 'file %s\n' "$i" >"$ws/f$i"
		i=$((i + 1))
	done
	echo deep >"$ws/sub/deep/x"
	for w in 1 2 3; do for k in 0 1 2 3 4; do echo "g $w $k" >"$ws/g$w-$k"; done; done
	ln -s f1 "$ws/link"
	ln "$ws/f2" "$ws/hard"
	chmod 640 "$ws/f3"
	manifest "$ws" >"$T/before"
}

# delay_ms N: a reproducible pseudo-random delay in [0, N) ms for this round.
delay_ms() { awk -v s="$seed" -v r="$round" -v n="$1" 'BEGIN { srand(s + r * 7919); printf "%d", rand() * n }'; }
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }

# Busy tree: three writers in the background, a sleeper and the main
# shell, each printing its pid first (stdout is an fd the tree inherits: not
# trapped, not part of the workspace). The writers append through an fd the
# main shell opened before starting them, so only the main shell makes
# trapped calls that change the tree: several processes changing names at
# once is concurrent.sh's business (and a known bug there).
WORKLOAD='
echo $$
exec 3>>w.log
for w in 1 2 3; do
	sh -c "echo \$\$; i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); echo $w.\$i >&3; done" &
done
sleep 60 &
echo $!
i=0
while [ $i -lt 3000 ]; do
	i=$((i+1)); echo $i >f$((i % 20)); chmod 600 f$((i % 20)); ln -sf f1 l$((i % 5))
	mv sub sub2; mv sub2 sub; rm -f hard; ln f2 hard; mkdir -p d/$i; rm -f g1-$((i % 5)); echo $i >g1-$((i % 5))
done
wait'

# show_stuck PID: what a process that should have ended is doing (its state,
# kernel wait channel and children), for the failure message.
show_stuck() {
	for q in "$1" $(cat "/proc/$1/task/"*/children 2>/dev/null); do
		[ -d "/proc/$q" ] || continue
		printf '  pid %s %s wchan=%s: %s\n' "$q" "$(grep '^State:' "/proc/$q/status" 2>/dev/null | tr -s '\t ' ' ')" \
			"$(cat "/proc/$q/wchan" 2>/dev/null)" "$(tr '\0' ' ' <"/proc/$q/cmdline" 2>/dev/null)" >&2
	done
}

# wait_bounded PID WHAT: wait for a child of this shell, 60 s at most; a
# txguard that does not end is a failure that says where it hangs, not a
# test killed by meson's timeout.
wait_bounded() {
	n=0
	while kill -0 "$1" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; do
		n=$((n + 1))
		if [ $n -gt 6000 ]; then
			show_stuck "$1"
			kill -KILL "$1" 2>/dev/null || true
			fail "round $round: $2 did not end within 60 s"
		fi
		sleep 0.01
	done
	wait "$1" 2>/dev/null
}

# check_tree_gone: every pid the tree printed is dead (or a zombie waiting
# for init to reap it) within a second.
check_tree_gone() {
	for p in $(cat "$T/pids" 2>/dev/null); do
		checked=$((checked + 1))
		n=0
		while [ -d "/proc/$p" ] && [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ]; do
			n=$((n + 1))
			[ $n -lt 100 ] || fail "round $round: traced process $p outlived txguard ($(tr '\0' ' ' <"/proc/$p/cmdline"))"
			sleep 0.01
		done
	done
	# txguard's own child, forked but not yet exec'd (a kill during the
	# start), holds the state dir's lock until it is gone: it printed no
	# pid, and recover would find the workspace busy (seen once under ASan).
	# flock(1) asks the lock itself, as recover does.
	[ -e "$st/lock" ] && command -v flock >/dev/null || return 0
	n=0
	while [ $n -lt 100 ] && ! flock -n "$st/lock" true; do
		n=$((n + 1))
		sleep 0.05
	done
}

# finish_round HOW: bring the workspace back (recover, or the next run) and
# compare it with its manifest.
finish_round() {
	check_tree_gone
	if [ -n "${TG_FAULTS_KEEP:-}" ]; then # for a post-mortem: the journal as the kill left it
		rm -rf "$TG_FAULTS_KEEP/state" "$TG_FAULTS_KEEP/ws" && mkdir -p "$TG_FAULTS_KEEP" &&
			cp -a "$st" "$TG_FAULTS_KEEP/state" && cp -a "$ws" "$TG_FAULTS_KEEP/ws" && cp "$T/before" "$TG_FAULTS_KEEP/"
	fi
	rc=0
	if [ $((round % 2)) = 0 ]; then
		what="txguard recover"
		"$TXGUARD" recover -w "$ws" --state-dir "$st" >"$T/rec.out" 2>&1 &
	else
		what="the next txguard -- true"
		tg -w "$ws" --state-dir "$st" -- true >"$T/rec.out" 2>&1 &
	fi
	wait_bounded $! "$what" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/rec.out" >&2; fail "round $round ($1): $what exited $rc"; }
	assert_manifest "round $round ($1), after $what" "$T/before" "$ws"
	no_txn "$st"
}

# --- txguard killed at a random point of a busy run ---------------------
checked=0
round=0
while [ $round -lt "$iters" ]; do
	fresh_ws 20
	sig=KILL
	[ $((round % 3)) = 2 ] && sig=SEGV
	: >"$T/pids"
	# A sanitizer's SIGSEGV handler would report and abort, or wedge in
	# its symbolizer: the crash modelled here is the kernel's default action.
	(ASAN_OPTIONS="${ASAN_OPTIONS:-}:handle_segv=0" exec "$TXGUARD" -q --no-default-policy -p "$T/policy.yaml" \
		-w "$ws" --state-dir "$st" -- sh -c "$WORKLOAD" >"$T/pids" 2>/dev/null) &
	pid=$!
	d=$(delay_ms 300)
	# Odd rounds count the delay from the tree's first pid, even ones from
	# txguard's start: on a loaded machine (an ASan start can take longer
	# than every delay) the kills must still land inside a running tree.
	from=start
	if [ $((round % 2)) = 1 ]; then
		from="the tree's start"
		n=0
		while [ ! -s "$T/pids" ] && [ $n -lt 3000 ] && kill -0 "$pid" 2>/dev/null; do
			sleep 0.01
			n=$((n + 1))
		done
	fi
	sleep_ms "$d"
	kill -s "$sig" "$pid" 2>/dev/null || true
	wait_bounded "$pid" "txguard sent SIG$sig" || true
	finish_round "SIG$sig ${d}ms after $from"
	round=$((round + 1))
done
[ "$iters" -lt 5 ] || [ "$checked" -gt 0 ] || fail "no traced pid was ever recorded: the tree never started?"

# --- txguard killed during the restore of a failed run ---------------------
# Stopped (SIGSTOP) as soon as its rollback has started (the journal's
# progress file appears), then killed: a kill that lands mid-restore every
# time the restore is slower than the poll.
MANY='for f in f*; do echo changed >"$f"; done; rm -f sub/deep/x; mkdir new; mv sub new/; exit 1'
midway=0
r=0
while [ $r -lt "$riters" ]; do
	round=$((iters + r))
	fresh_ws 400
	(exec "$TXGUARD" -q --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" \
		-- sh -c "$MANY" >/dev/null 2>&1) &
	pid=$!
	: >"$T/pids"
	n=0
	while kill -0 "$pid" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 6000 ] || { show_stuck "$pid"; kill -KILL "$pid"; fail "round $round: the failed run did not end within 30 s"; }
		if ls "$st"/txn/*/progress >/dev/null 2>&1; then
			kill -STOP "$pid" 2>/dev/null || true
			sleep_ms "$(delay_ms 3)"
			grep -q '^state=rolling-back$' "$st"/txn/*/info 2>/dev/null && midway=$((midway + 1))
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.005
	done
	wait_bounded "$pid" "txguard killed mid-restore" || true
	finish_round "killed during the restore"
	r=$((r + 1))
done
echo "ok: $iters runs and $riters restores killed ($midway of them mid-restore), every workspace recovered; $checked traced pids checked gone"
[ "$riters" = 0 ] || [ "$midway" -gt 0 ] || fail "no kill landed during a restore (the restores finished before the poll saw them)"
