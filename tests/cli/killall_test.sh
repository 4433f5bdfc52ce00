#!/bin/sh
# killall_test.sh — `kill -9 -1` under txguard signals nothing: the BPF
# filter denies kill(-1, sig), which as root would take down every process
# the caller may signal (txguard included). Run inside the throwaway arena:
# should the rule ever break, only the arena's own PID namespace dies.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the arena needs root"
tg_need_arena
tg_tmpdir
out=$("$TXGUARD_SOURCE_DIR/scripts/arena" -- sh -c '
	mkdir -p /tmp/ka-ws && cd /tmp/ka-ws
	sleep 30 & victim=$!
	"$TXGUARD" -q -w /tmp/ka-ws -- sh -c "kill -9 -1; echo kill-rc=\$?; kill -0 $victim && echo victim-alive"
	echo txguard-rc=$?
	kill $victim
' 2>&1) || true
echo "$out"
echo "$out" | grep -q "kill-rc=1" || fail "kill -9 -1 was not refused"
echo "$out" | grep -q "victim-alive" || fail "a process outside the tree was killed"
echo "$out" | grep -q "txguard-rc=0" || fail "txguard did not survive"
