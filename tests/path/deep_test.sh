#!/bin/sh
# deep_test.sh — trees deeper than PATH_MAX (issue 15, item 10). The kernel
# walks them through directory fds (rm -rf does) but prints no such path
# (readlink of /proc/PID/fd/N or cwd: ENAMETOOLONG); txguard must judge,
# journal and restore them all the same, as it does a shallow tree.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
ws=$TG_TMP/ws
st=$TG_TMP/state
mkdir -p "$ws"
"$TXGUARD" doctor >/dev/null 2>&1 || skip "txguard doctor: this kernel forbids what txguard needs"
tg() { "$TXGUARD" -q --no-default-policy -p "$TXGUARD_POLICY_DIR" --state-dir "$st" -w "$ws" "$@"; }

# deep.py make|hash|write-at|cat-at ROOT ...: the tree is walked one
# directory fd at a time, as no single path can name its bottom.
cat > "$TG_TMP/deep.py" <<'PY'
import hashlib, os, sys
op, root = sys.argv[1], sys.argv[2]
NAME = "d" * 100
def down(create):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(50):
        if create:
            os.mkdir(NAME + str(i), 0o755, dir_fd=fd)
        nfd = os.open(NAME + str(i), os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    return fd
if op == "make":
    fd = down(True)
    f = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=fd)
    os.write(f, b"bottom\n")
    os.close(f)
elif op == "hash":
    # every directory's and the leaf's name, mode and content, top down
    h = hashlib.sha256()
    try:
        fd = down(False)
    except FileNotFoundError:
        print("absent"); sys.exit(0)
    for name in sorted(os.listdir(fd)):
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        h.update(("%s %o\n" % (name, st.st_mode)).encode())
        if name.startswith("leaf"):
            f = os.open(name, os.O_RDONLY, dir_fd=fd)
            h.update(os.read(f, 1 << 16))
            os.close(f)
    print(h.hexdigest())
elif op == "write-at":
    # chdir to the bottom (fchdir: no path), then write by a relative name
    fd = down(False)
    os.fchdir(fd)
    print(len(os.getcwd()) > 4096, file=sys.stderr)
    with open(sys.argv[3], "w") as f:
        f.write("new\n")
    sys.exit(int(sys.argv[4]))
PY
deep() { python3 "$TG_TMP/deep.py" "$@"; }

deep make "$ws" || fail "cannot build the deep tree"
before=$(deep hash "$ws")
[ "$before" != absent ] || fail "the deep tree is not there"

# --- rm -rf of the tree, failed: restored byte for byte ---
rc=0
tg -- sh -c "rm -rf '$ws/$(printf 'd%.0s' $(seq 100))0'; exit 3" || rc=$?
assert_eq "exit of a failed rm -rf of a deep tree" 3 "$rc"
assert_eq "deep tree after rollback" "$before" "$(deep hash "$ws")"

# --- rm -rf committed, then undone ---
tg --report "$TG_TMP/r.json" -- rm -rf "$ws/$(printf 'd%.0s' $(seq 100))0" || fail "rm -rf of a deep tree failed under txguard"
assert_eq "deep tree after a committed rm -rf" absent "$(deep hash "$ws")"
python3 - "$TG_TMP/r.json" <<'PY' || fail "report of the deep rm -rf"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["outcome"] == "committed", r["outcome"]
assert r["changes"]["counts"]["deleted"] == 51, r["changes"]["counts"]
assert not r["decisions"], r["decisions"]
PY
"$TXGUARD" -q undo --state-dir "$st" -w "$ws" >/dev/null || fail "undo of the deep rm -rf"
assert_eq "deep tree after undo" "$before" "$(deep hash "$ws")"

# --- a write from a cwd deeper than PATH_MAX: judged, journaled, undone ---
rc=0
tg -- python3 "$TG_TMP/deep.py" write-at "$ws" leaf2 1 || rc=$?
assert_eq "exit of a failed deep write" 1 "$rc"
assert_eq "deep tree after the failed write" "$before" "$(deep hash "$ws")"
tg -- python3 "$TG_TMP/deep.py" write-at "$ws" leaf2 0 || fail "a write from a deep cwd failed"
[ "$(deep hash "$ws")" != "$before" ] || fail "the committed deep write left no file"
"$TXGUARD" -q undo --state-dir "$st" -w "$ws" >/dev/null || fail "undo of the deep write"
assert_eq "deep tree after undoing the write" "$before" "$(deep hash "$ws")"
echo "ok: deep trees (> PATH_MAX) are removed, written, restored and undone"
