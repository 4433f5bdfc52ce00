#!/usr/bin/env python3
"""summary_check.py BEFORE AFTER REPORT: does a run's report say what it did?

BEFORE and AFTER are tg-treehash manifests of the workspace taken before and
after a committed run, REPORT its JSON report. The report's "changes" must
be sound (each line names what the tree shows: a created name exists and
is new, a deleted one existed and is gone, a rename goes from an old name
to one that exists) and complete (every name that appeared, disappeared or
changed is accounted for by a line on it or on a directory above it, the
way docs/journal.md, "Summary of a run", defines them). Prints each
violation; exit status 1 if there is any.
"""
import json
import re
import sys


def unescape(s):
    return re.sub(rb"%([0-9A-F]{2})", lambda m: bytes([int(m.group(1), 16)]), s)


def manifest(path):
    """path (bytes) -> its attributes, without what a report does not
    track: times of directories (any name made or removed in them) and the
    hard-link group (another name's link or unlink); and path -> the first
    name of its hard-link group, for the names that have one."""
    out, group = {}, {}
    with open(path, "rb") as f:
        for line in f:
            name, _, rest = line.rstrip(b"\n").partition(b" ")
            if name == b".":
                continue
            name = unescape(name)
            fields = rest.split(b" ")
            for x in fields:
                if x.startswith(b"link="):  # the group's first name has none
                    group[name] = group[unescape(x[5:])] = unescape(x[5:])
            fields = [x for x in fields if not x.startswith(b"link=")]
            if b"type=4" in fields:
                fields = [x for x in fields if not x.startswith(b"mtime=")]
            out[name] = b" ".join(fields)
    return out, group


def parents(p):
    parts = p.split(b"/")
    return [b"/".join(parts[:i]) for i in range(1, len(parts))]


def main():
    (before, bgroup), (after, agroup) = manifest(sys.argv[1]), manifest(sys.argv[2])
    # A change through one name of a hard-linked file is reported there;
    # its other names change with it (one inode, one line).
    members = {}
    for g in (bgroup, agroup):
        for p, first in g.items():
            members.setdefault(first, set()).add(p)

    def linked(p):
        out = set()
        for g in (bgroup, agroup):
            if p in g:
                out |= members[g[p]]
        return out
    ch = json.load(open(sys.argv[3], "rb"))["changes"]
    if ch["truncated"]:
        print("the report is truncated: make the run smaller")
        return 1

    def names(key):  # the exact bytes: <key>_hex where not UTF-8 (docs/interfaces.md)
        hexes = ch.get(key + "_hex") or [None] * len(ch[key])
        return {bytes.fromhex(h) if h is not None else p.encode() for p, h in zip(ch[key], hexes)}

    def exact(obj, key):
        h = obj.get(key + "_hex")
        return bytes.fromhex(h) if h is not None else obj[key].encode()

    created, modified, deleted, meta = names("created"), names("modified"), names("deleted"), names("metadata")
    renamed = [(exact(r, "from"), exact(r, "to")) for r in ch["renamed"]]
    froms = {f for f, _ in renamed}
    tos = {t for _, t in renamed}
    said = created | modified | deleted | meta | froms | tos

    def up(p, s):  # p or a directory above it is in s
        return p in s or any(q in s for q in parents(p))

    bad = []
    # Sound: every line names what the tree shows.
    for p in created:
        if p not in after:
            bad.append("created but not there: %r" % p)
        elif p in before and not up(p, froms):
            bad.append("created where an original was and did not move away (modified?): %r" % p)
    for p in deleted:
        if p not in before:
            bad.append("deleted but not there before: %r" % p)
        elif p in after and not up(p, tos):
            bad.append("deleted but still there: %r" % p)
    for p in modified | meta:
        if p not in after:
            bad.append("modified or metadata but not there: %r" % p)
    for f, t in renamed:
        if f not in before:
            bad.append("renamed from a name not there before: %r" % f)
        if t not in after:
            bad.append("renamed to a name not there: %r" % t)
    # Complete: every difference is on a line, or below one that carries it.
    for p in before.keys() - after.keys():
        if not (up(p, deleted) or up(p, froms)):
            bad.append("gone, not reported: %r" % p)
    for p in after.keys() - before.keys():
        if not (up(p, created) or up(p, tos) or p in modified or p in meta):
            bad.append("new, not reported: %r" % p)
    for p in before.keys() & after.keys():
        if before[p] != after[p] and not (p in said or up(p, created) or up(p, tos) or up(p, froms) or
                                          linked(p) & said):
            bad.append("changed, not reported: %r (%s -> %s)" % (p, before[p].decode(), after[p].decode()))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
