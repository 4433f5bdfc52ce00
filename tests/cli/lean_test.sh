#!/bin/sh
# lean_test.sh — what a run costs outside the command (issue 16), as
# outcomes, never timings: a run that changes nothing writes nothing to the
# state dir, syncs nothing and loads no library it does not use; a long
# argv (ARG_MAX scale) reaches the command intact and the policy still sees
# all of it; pruned history is
# retired at commit and freed at once when small, in the background when
# not, and a leftover trash is freed by the next prune without touching
# the history.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
ws=$TG_TMP/ws
st=$TG_TMP/state
mkdir -p "$ws"
"$TXGUARD" doctor >/dev/null 2>&1 || skip "txguard doctor: this kernel forbids what txguard needs"
tg() { "$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" --state-dir "$st" -w "$ws" "$@"; }
txns() { ls "$st/txn" 2>/dev/null | wc -l; }

# --- nothing changed: no journal dir, no history entry; the report says so ---
tg --report "$TG_TMP/r.json" -- true || fail "true failed"
assert_eq "journal dirs after true" 0 "$(txns)"
python3 - "$TG_TMP/r.json" <<'PY' || fail "report of a run that changed nothing"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "committed", r["outcome"]
assert all(v == 0 for v in r["changes"]["counts"].values()), r["changes"]
PY
tg -- sh -c 'echo x > tmp; rm tmp' || fail "temp file run"
assert_eq "journal dirs after a temp file" 0 "$(txns)"
tg -- sh -c 'echo kept > kept' || fail "a change"
assert_eq "journal dirs after a change" 1 "$(txns)"
assert_eq "log lists the change only" 1 "$("$TXGUARD" log --json --state-dir "$st" -w "$ws" | grep -o '"id"' | wc -l)"
# ... and no fsync in txguard itself (strace of txguard alone: it traces the tree)
if command -v strace >/dev/null; then
	strace -qq -o "$TG_TMP/st" -e trace=fsync,fdatasync,sync_file_range,mkdir,mkdirat \
		"$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" --state-dir "$st" -w "$ws" -- true ||
		fail "true under strace"
	if grep -E '^(fsync|fdatasync|sync_file_range)' "$TG_TMP/st"; then
		fail "a run that changed nothing synced"
	fi
	if grep -E '^mkdir' "$TG_TMP/st" | grep -v EEXIST; then
		fail "a run that changed nothing made a directory"
	fi
	# A run dir is durable through txn/'s fsync, and txn/ through the
	# state dir's, which only the run that made txn/ needs.
	st2=$(realpath "$TG_TMP")/state2 # as strace -y names it
	for i in 1 2; do
		strace -qq -y -o "$TG_TMP/fs$i" -e trace=fsync \
			"$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" --state-dir "$st2" -w "$ws" \
			-- sh -c "echo $i > synced" || fail "run $i under strace"
	done
	grep -qF "<$st2/txn>)" "$TG_TMP/fs1" || fail "the first run did not sync txn/: $(cat "$TG_TMP/fs1")"
	grep -qF "<$st2>)" "$TG_TMP/fs1" || fail "the run that made txn/ did not sync the state dir"
	grep -qF "<$st2/txn>)" "$TG_TMP/fs2" || fail "the second run did not sync txn/: $(cat "$TG_TMP/fs2")"
	if grep -F "<$st2>)" "$TG_TMP/fs2"; then
		fail "a run synced the state dir, though txn/ was there already"
	fi
fi

# --- libraries loaded at their first use (core/base/lazy.h) ---
# ld.so's own account (LD_DEBUG=libs) of what each run loaded: a run whose
# policy and filter are cached and that saves no pre-image loads none of
# libseccomp, libyaml, libzstd and libarchive; a parse loads libyaml, a
# filter build libseccomp, a tar capture libzstd.
loaded() { # loaded LIB FILE: did the run whose LD_DEBUG output is FILE load LIB?
	grep -q "find library=$1" "$2"
}
tg -- true || fail "warming the policy cache"
LD_DEBUG=libs tg -- true 2>"$TG_TMP/libs.warm" || fail "true with LD_DEBUG"
for lib in libseccomp libyaml libzstd libarchive; do
	if loaded "$lib" "$TG_TMP/libs.warm"; then
		fail "a cached start loaded $lib: $(grep "find library" "$TG_TMP/libs.warm")"
	fi
done
loaded libc.so "$TG_TMP/libs.warm" || fail "LD_DEBUG=libs shows no libraries: $(head -c 300 "$TG_TMP/libs.warm")"
TXGUARD_POLICY_CACHE=0 LD_DEBUG=libs tg -- true 2>"$TG_TMP/libs.parse" || fail "true without the cache"
loaded libyaml "$TG_TMP/libs.parse" || fail "policy parsed without loading libyaml?"
loaded libseccomp "$TG_TMP/libs.parse" || fail "filter built without loading libseccomp?"
# A cached filter names the libseccomp file that built it, and a change of
# that file (an upgrade in place) is a rebuild. A copy of the library,
# found first through LD_LIBRARY_PATH, and a cache of its own.
real=$(/sbin/ldconfig -p 2>/dev/null | awk '/libseccomp\.so\.2 .*x86-64/ { print $NF; exit }')
if [ -n "$real" ] && [ -f "$real" ]; then
	mkdir -p "$TG_TMP/lib" "$TG_TMP/xdg"
	cp -L "$real" "$TG_TMP/lib/libseccomp.so.2"
	tgl() { # tgl N: a run of true whose LD_DEBUG output goes to libs.N
		XDG_STATE_HOME=$TG_TMP/xdg LD_LIBRARY_PATH=$TG_TMP/lib LD_DEBUG=libs tg -- true 2>"$TG_TMP/libs.$1" ||
			fail "true (run $1) with the copied library"
	}
	tgl 1
	grep -q "file=$TG_TMP/lib/libseccomp.so.2" "$TG_TMP/libs.1" ||
		fail "the first run did not build with the copy: $(grep seccomp "$TG_TMP/libs.1")"
	tgl 2
	! loaded libseccomp "$TG_TMP/libs.2" || fail "the second run rebuilt the filter"
	printf '\0' >>"$TG_TMP/lib/libseccomp.so.2"
	tgl 3
	loaded libseccomp "$TG_TMP/libs.3" || fail "a changed libseccomp did not rebuild the filter"
	tgl 4
	! loaded libseccomp "$TG_TMP/libs.4" || fail "the rebuilt filter was not cached"
	rm -f "$TG_TMP/lib/libseccomp.so.2"
	tgl 5
	loaded libseccomp "$TG_TMP/libs.5" || fail "the filter of a removed libseccomp was used"
fi
before=$(ls "$st/txn")
LD_DEBUG=libs tg -- sh -c 'echo rewritten > kept' 2>"$TG_TMP/libs.capture" || fail "rewriting kept"
run=$(ls "$st/txn" | grep -vxF "$before" | head -n 1)
[ -n "$run" ] || fail "the rewrite left no journal"
# A reflink filesystem stashes the pre-image without the tar.
if [ -s "$st/txn/$run/pre.tar.zst" ]; then
	loaded libzstd "$TG_TMP/libs.capture" || fail "a tar capture did not load libzstd"
else
	! loaded libzstd "$TG_TMP/libs.capture" || fail "libzstd loaded, yet no tar was written"
fi

# --- a 2 MB argv: intact, and judged whole ---
# ~2 MB of arguments under ARG_MAX (getconf: the stack rlimit / 4).
max=$(getconf ARG_MAX)
n=$((max / 2 / 12))
[ "$n" -gt 150000 ] && n=150000
args=$(seq -f 'argument%.0f' 1 "$n")
# shellcheck disable=SC2086  # one argument per line: splitting is the point
want=$(printf '%s\n' $args | md5sum)
# shellcheck disable=SC2086
got=$(tg -- sh -c 'printf "%s\n" "$@" | md5sum' sh $args) || fail "long argv run failed"
assert_eq "$n arguments arrive intact" "$want" "$got"
# A rule that matches only the last argument still fires.
cat >"$TG_TMP/last.yaml" <<'Y'
version: 1
rules:
  - id: test-last-arg
    reason: the last argument of a long command line is seen
    action: deny
    exec:
      program: [echo]
      args: [forbidden-last]
Y
rc=0
# shellcheck disable=SC2086
"$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" -p "$TG_TMP/last.yaml" --state-dir "$st" \
	-w "$ws" --report "$TG_TMP/r2.json" -- /bin/echo $args forbidden-last >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "an exec whose last of $n arguments is denied ran"
grep -q test-last-arg "$TG_TMP/r2.json" || fail "the report lacks the rule: $(head -c 400 "$TG_TMP/r2.json")"

# --- pruning: retired at commit, freed at once when small, else in the background ---
for i in 1 2 3 4; do
	TXGUARD_HISTORY_MAX_RUNS=2 tg -- sh -c "echo $i > f$i" || fail "run $i"
done
assert_eq "history bound" 2 "$(txns)"
# A run of one change is a few names: freed before txguard returned.
assert_eq "small runs freed at once" "" "$(ls "$st/trash" 2>/dev/null)"
# One that deleted 60 files keeps 60 pre-images: more than is freed in
# place, so the background gc frees it (wait for it, bounded, not a timing).
mkdir "$ws/many" && for i in $(seq 60); do echo "$i" >"$ws/many/$i"; done
TXGUARD_HISTORY_MAX_RUNS=2 tg -- rm -r many || fail "rm -r many"
names=$(find "$st/txn/$(ls "$st/txn" | tail -n 1)" | wc -l)
[ "$names" -gt 32 ] || fail "the rm's run dir holds only $names names"
for i in 6 7; do
	TXGUARD_HISTORY_MAX_RUNS=2 tg -- sh -c "echo $i > g$i" || fail "run g$i"
done
i=0
while [ -n "$(ls "$st/trash" 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
assert_eq "trash emptied" "" "$(ls "$st/trash" 2>/dev/null)"
# A gc that died left a run in the trash: the next prune frees it; the
# history keeps its two newest runs, whole (undo of the newest works).
mkdir -p "$st/trash/20000101T000000.000-dead00/stash"
echo leftover >"$st/trash/20000101T000000.000-dead00/stash/1"
TXGUARD_HISTORY_MAX_RUNS=2 tg -- sh -c 'echo 5 > f5' || fail "run 5"
i=0
while [ -n "$(ls "$st/trash" 2>/dev/null)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
assert_eq "leftover trash freed" "" "$(ls "$st/trash" 2>/dev/null)"
assert_eq "history bound kept" 2 "$(txns)"
# The background gc is this binary exec'd as txguard-gc STATE_DIR: it
# empties the trash and leaves the history alone.
mkdir -p "$st/trash/20000101T000000.000-dead01/stash"
echo leftover >"$st/trash/20000101T000000.000-dead01/stash/1"
bash -c 'exec -a txguard-gc "$0" "$1"' "$TXGUARD" "$st" || fail "txguard-gc exited $?"
assert_eq "txguard-gc emptied the trash" "" "$(ls "$st/trash")"
assert_eq "txguard-gc kept the history" 2 "$(txns)"
bash -c 'exec -a txguard-gc "$0" "$1"' "$TXGUARD" "$TG_TMP/no-such-state" || fail "txguard-gc of a missing dir"
"$TXGUARD" undo --state-dir "$st" -w "$ws" >/dev/null || fail "undo of the newest run"
[ ! -e "$ws/f5" ] || fail "undo did not remove f5"
[ -e "$ws/f4" ] || fail "f4 is gone"
echo "ok"
