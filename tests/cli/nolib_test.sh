#!/bin/sh
# nolib_test.sh — where libseccomp cannot be loaded (it is loaded at its
# first use, core/base/lazy.h), nothing that needs it runs, and the message
# says why: no filter is built, even where one was cached (an entry is good
# only while the library that built it is there, unchanged), and a policy
# that names a syscall is an error at its file and line.
# The library is removed inside the throwaway arena only: its root is an
# overlay whose changes vanish with it.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the arena needs root"
tg_need_arena
tg_tmpdir
out=$("$TXGUARD_SOURCE_DIR/scripts/arena" -- sh -c '
	mkdir -p /tmp/nl-ws && cd /tmp/nl-ws
	export XDG_STATE_HOME=/tmp/nl-state
	mkdir -p "$XDG_STATE_HOME"
	tg() { "$TXGUARD" -q -w /tmp/nl-ws "$@"; }
	tg -- true && echo warmed
	lib=$(/sbin/ldconfig -p | awk "/libseccomp\\.so\\.2 .*x86-64/ { print \$NF; exit }")
	rm -f "$(readlink -f "$lib")" "$lib"
	[ -e "$lib" ] || echo removed
	tg -- sh -c "echo ran > cached-ran" 2>/tmp/nl-err; echo "cached-rc=$?"
	[ -e cached-ran ] || echo cached-did-not-run
	cat /tmp/nl-err
	printf "version: 1\nrules:\n  - id: no-keys\n    reason: keys\n    action: deny\n    syscall: [keyctl]\n" > /tmp/nl-pol.yaml
	TXGUARD_POLICY_CACHE=0 tg --no-default-policy -p /tmp/nl-pol.yaml -- touch policy-ran 2>/tmp/nl-err2
	echo "policy-rc=$?"
	[ -e policy-ran ] || echo policy-did-not-run
	cat /tmp/nl-err2
' 2>&1) || true
echo "$out"
want() { echo "$out" | grep -q -- "$1" || fail "missing: $1"; }
want "^warmed$"
want "^removed$"
want "^cached-rc=125$"
want "^cached-did-not-run$"
want "cannot build the seccomp filter: Can not access a needed shared library"
want "^policy-rc=125$"
want "^policy-did-not-run$"
want "nl-pol.yaml:6:15: cannot check syscall 'keyctl' without libseccomp: libseccomp.so.2: cannot open"
