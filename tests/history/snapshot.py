#!/usr/bin/env python3
"""snapshot.py DIR — one line per entry below DIR, sorted: path (repr, so
any byte is visible), type, permission bits, and per type: files their size,
SHA-256, mtime and hard-link group (the first path of the group inside DIR:
links held from outside, e.g. by a journal's stash, do not count); symlinks
their target and mtime; directories nothing more (undo recreates entries in
them, so their mtimes move). User xattrs of every entry."""
import hashlib
import os
import stat
import sys

root = os.fsencode(sys.argv[1])
entries = []
for dirpath, dirnames, filenames in os.walk(root):
    for name in dirnames + filenames:
        p = os.path.join(dirpath, name)
        entries.append((os.path.relpath(p, root), os.lstat(p)))
groups = {}
for rel, st in sorted(entries):
    if stat.S_ISREG(st.st_mode):
        groups.setdefault((st.st_dev, st.st_ino), rel)
for rel, st in sorted(entries):
    m = st.st_mode
    line = [repr(rel), stat.filemode(m)]
    p = os.path.join(root, rel)
    if stat.S_ISREG(m):
        with open(p, "rb") as f:
            h = hashlib.sha256(f.read()).hexdigest()
        line += [str(st.st_size), h, str(st.st_mtime_ns), "group=" + repr(groups[(st.st_dev, st.st_ino)])]
    elif stat.S_ISLNK(m):
        line += ["-> " + repr(os.readlink(p)), str(st.st_mtime_ns)]
    try:
        names = sorted(n for n in os.listxattr(p, follow_symlinks=False) if n.startswith("user."))
        line += [n + "=" + repr(os.getxattr(p, n, follow_symlinks=False)) for n in names]
    except OSError:
        pass
    print(" ".join(line))
