# lib.sh — shared by the fault tests: a temp dir, a permissive policy (the
# faults under test are txguard's own, not the policy's), tree manifests.
. "$(dirname "$0")/../lib/common.sh"

require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (mounts a tmpfs in a private mount namespace)"
	command -v unshare >/dev/null || skip "needs unshare(1)"
	unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace"
}

# With TG_FAULTS_NS=want, the script re-runs itself in a private mount
# namespace: every mount it makes vanishes with it and never reaches the
# host's mount table, even if the script is killed.
if [ "${TG_FAULTS_NS:-}" = want ]; then
	require_root
	TG_FAULTS_NS=inside exec unshare -m --propagation private "$0" "$@"
fi

tg_tmpdir
T=$TG_TMP
# mount_tmpfs DIR SIZE: a fresh tmpfs of SIZE on DIR (inside $T only).
mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2,mode=0700" tg-faults "$1"
	MOUNTS="$1 ${MOUNTS:-}"
}
unmount_all() {
	for m in ${MOUNTS:-}; do umount -l "$m" 2>/dev/null || true; done
	MOUNTS=
}
trap 'unmount_all; rm -rf "$T"' EXIT
mkdir -p "$T/home"
export HOME="$T/home"
unset TXGUARD_STATE_DIR TXGUARD_POLICY
printf 'version: 1\n' >"$T/policy.yaml"

# tg ARGS: txguard with the test policy (ARGS carry -w, --state-dir, -- CMD).
# shellcheck disable=SC2086 # TG_Q is "-q" or empty
tg() { "$TXGUARD" ${TG_Q--q} --no-default-policy -p "$T/policy.yaml" "$@"; }
code() { rc=0; "$@" || rc=$?; echo "$rc"; }

# manifest DIR: content, type, mode, owner, links, xattrs and mtime of every
# entry (tests/journal's tg-treehash when built, else find + sha256sum).
manifest() {
	if [ -n "${TG_TREEHASH:-}" ] && [ -x "$TG_TREEHASH" ]; then
		"$TG_TREEHASH" "$1"
		return
	fi
	(cd "$1" && find . -printf '%p %y %m %u:%g %s %T@ %l\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
}

# assert_manifest WHAT FILE DIR: DIR's manifest equals the one saved in FILE.
assert_manifest() {
	manifest "$3" >"$T/manifest.now"
	if ! cmp -s "$2" "$T/manifest.now"; then
		diff -u "$2" "$T/manifest.now" | head -40 >&2 || true
		fail "$1: the workspace differs from its manifest"
	fi
}

# no_txn STATE_DIR: nothing unfinished left in the state dir.
no_txn() {
	for d in "$1"/txn/*; do
		[ -e "$d" ] || continue
		state=$(sed -n 's/^state=//p' "$d/info" 2>/dev/null || true)
		case $state in committed | undone) ;; *) fail "transaction $(basename "$d") left in state '$state'" ;; esac
	done
}

require_runs() {
	mkdir -p "$T/probe"
	tg -w "$T/probe" --state-dir "$T/probe-state" -- true >/dev/null 2>"$T/probe.err" ||
		tg_cannot_run "$T/probe.err"
	rm -rf "$T/probe" "$T/probe-state"
}
