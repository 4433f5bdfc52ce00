#!/bin/sh
# unpriv_test.sh — txguard as an unprivileged user (a developer's laptop):
# no_new_privs lets the filter load without privileges, Landlock is built
# from what that user can reach, the journal lives under the user's $HOME,
# a failed run is restored and a good one committed. Also in a workspace the
# user does not own (a shared 1777 directory), whose own times cannot be put
# back by this user: the restore must still finish.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "needs root to switch to an unprivileged user"
command -v setpriv >/dev/null || skip "needs setpriv(1)"
tg_tmpdir
chmod 755 "$TG_TMP"
cp "$TXGUARD" "$TG_TMP/txguard"
chmod 755 "$TG_TMP/txguard"
mkdir -p "$TG_TMP/home" "$TG_TMP/ws/src" "$TG_TMP/shared"
echo a >"$TG_TMP/ws/src/a"
echo n >"$TG_TMP/ws/notes"
chown -R 65534:65534 "$TG_TMP/home" "$TG_TMP/ws"
chmod 1777 "$TG_TMP/shared"

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -u XDG_STATE_HOME HOME="$TG_TMP/home" TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d" "$@"
}
code() { rc=0; "$@" || rc=$?; echo "$rc"; }

before=$(cd "$TG_TMP/ws" && find . -printf '%p %y %m %s\n' | sort; cat notes src/a)
assert_eq "failed run" 3 "$(code as_nobody "$TG_TMP/txguard" -q -w "$TG_TMP/ws" -- sh -c 'rm -rf src; echo x > notes; touch new; exit 3')"
after=$(cd "$TG_TMP/ws" && find . -printf '%p %y %m %s\n' | sort; cat notes src/a)
assert_eq "restored as nobody" "$before" "$after"
assert_eq "good run" 0 "$(code as_nobody "$TG_TMP/txguard" -q -w "$TG_TMP/ws" -- sh -c 'echo more >> notes')"
assert_eq "committed as nobody" "n
more" "$(cat "$TG_TMP/ws/notes")"
as_nobody "$TG_TMP/txguard" log -w "$TG_TMP/ws" | grep -q "echo more" || fail "history is missing the run"

assert_eq "failed run in a shared dir" 1 "$(code as_nobody "$TG_TMP/txguard" -q -w "$TG_TMP/shared" -- sh -c 'echo hi > f; exit 1')"
[ ! -e "$TG_TMP/shared/f" ] || fail "the shared workspace was not restored"
assert_eq "next run in the shared dir" 0 "$(code as_nobody "$TG_TMP/txguard" -q -w "$TG_TMP/shared" -- sh -c 'echo hi > f')"
[ -e "$TG_TMP/shared/f" ] || fail "the shared workspace's good run did not commit"
echo ok
