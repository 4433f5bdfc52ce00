#!/bin/sh
# arena_test.sh — prove that scripts/arena is a throwaway: destructive
# commands inside change nothing on this machine.
. "$(dirname "$0")/../lib/common.sh"

ARENA="$TXGUARD_SOURCE_DIR/scripts/arena"

if [ "$(id -u)" != 0 ] && ! unshare --user --map-root-user true 2>/dev/null; then
	skip "arena needs root or unprivileged user namespaces"
fi
tg_need_arena
tg_tmpdir

# A fingerprint of what the destructive commands target, taken on the host.
fingerprint() {
	{
		ls -A /etc /usr/share
		find /usr/share -maxdepth 2 -type f 2>/dev/null | sort | head -n 30 | xargs -r sha256sum
		sha256sum /etc/passwd /etc/group
		find /etc /usr/share | wc -l
		hostname
		cat /proc/net/dev | cut -d: -f1
	} | sha256sum
}
before=$(fingerprint)
host_name=$(hostname)
src_probe="$TXGUARD_SOURCE_DIR/.arena-leak-probe-$$"
tmp_probe="/tmp/.arena-leak-probe-$$"

# 1. The exit code of CMD is forwarded, signals as 128+N.
rc=0; "$ARENA" -- sh -c 'exit 42' || rc=$?
assert_eq "exit code" 42 "$rc"
rc=0; "$ARENA" sh -c 'kill -9 $$' || rc=$?
assert_eq "signal exit code" 137 "$rc"

# 2. The destructive run. Each check inside exits with its own code so a
#    failure says which one.
rc=0
"$ARENA" -- sh -c '
	[ "$ARENA" = 1 ] || exit 10
	[ -f "$1/meson.build" ] || exit 11          # source tree visible
	touch "$2" "$3" || exit 12                  # writes land in the arena
	eff=$(sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status)
	# sys_module 16, sys_rawio 17, sys_boot 22, sys_admin 21, sys_time 25
	mask=$(( (1 << 16) | (1 << 17) | (1 << 21) | (1 << 22) | (1 << 25) ))
	[ $(( 0x$eff & mask )) = 0 ] || exit 22
	# (/etc/alternatives goes too: only builtins and /usr/bin after this.)
	rm -rf /usr/share /etc
	if ls /etc >/dev/null 2>&1; then exit 13; fi
	[ ! -e /usr/share ] || exit 14
	dd if=/dev/zero of=/dev/null bs=1M count=8 2>/dev/null || exit 15
	[ "$(hostname)" = txguard-arena ] || exit 16
	if hostname evil 2>/dev/null; then exit 17; fi   # CAP_SYS_ADMIN dropped
	ifs=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")
	[ "$ifs" = "lo " ] || { echo "interfaces: $ifs" >&2; exit 18; }
	if echo x 2>/dev/null >/proc/sys/kernel/domainname; then exit 19; fi  # /proc is ro
	[ ! -e /sys/kernel ] || exit 20               # no /sys
	[ "$$" = 1 ] || [ "$(ps -e 2>/dev/null | wc -l)" -lt 10 ] || exit 21
	exit 0
' arena "$TXGUARD_SOURCE_DIR" "$src_probe" "$tmp_probe" || rc=$?
assert_eq "destructive run inside the arena" 0 "$rc"

# 3. The host is untouched.
assert_eq "host fingerprint" "$before" "$(fingerprint)"
assert_eq "host hostname" "$host_name" "$(hostname)"
[ -d /etc ] && [ -d /usr/share ] || fail "host /etc or /usr/share is gone"
[ ! -e "$src_probe" ] || fail "a write in the arena leaked to the host's source tree"
[ ! -e "$tmp_probe" ] || fail "a write in the arena's /tmp leaked to the host"

# 4. The self-check refuses when the root was not switched; CMD never runs.
rc=0
ARENA_SELFTEST_BREAK=pivot "$ARENA" -- touch "$TG_TMP/ran" 2>"$TG_TMP/err" || rc=$?
assert_eq "refusal exit code" 125 "$rc"
[ ! -e "$TG_TMP/ran" ] || fail "CMD ran although the self-check failed"
grep -q refusing "$TG_TMP/err" || fail "no refusal message: $(cat "$TG_TMP/err")"

# 5. CMD starts in the caller's directory.
assert_eq "cwd" "$(cd "$TXGUARD_SOURCE_DIR" && pwd -P)" "$(cd "$TXGUARD_SOURCE_DIR" && "$ARENA" pwd -P)"

# 6. Usage errors are setup errors.
rc=0; "$ARENA" -- 2>/dev/null || rc=$?
assert_eq "no command" 125 "$rc"
echo "arena: ok"
