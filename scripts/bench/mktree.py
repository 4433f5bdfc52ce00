#!/usr/bin/python3
"""mktree.py DIR NFILES TOTAL_BYTES [SEED] — a reproducible workspace-like tree.

Layout: DIR/dNNN/sNN/fNNNN.{c,txt,bin}, 100 files per leaf directory. Sizes follow a
long-tailed distribution (most files a few KiB, a few up to 4 MiB) scaled to TOTAL_BYTES.
Contents are slices of two pools: text (compresses ~3-4x, like source code) and random
bytes (does not compress, like objects and images), half and half by file, so that the
tar|zstd comparison is neither flattered nor punished.

Writes into DIR.partial and renames it to DIR at the end, so an interrupted run never
leaves a half tree that later runs would take as complete.
"""
import os
import random
import shutil
import sys

PER_DIR = 100
SUBDIRS = 10


def make_pools(rng):
    words = [
        "static", "int", "return", "struct", "const", "char", "void", "if", "else",
        "for", "while", "size_t", "NULL", "errno", "path", "fd", "buf", "len",
        "tg_journal", "policy", "(", ")", "{", "}", ";", "->", "=", "+", "0", "1",
    ]
    text = []
    n = 0
    while n < 8 << 20:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(2, 12))) + "\n"
        if rng.random() < 0.3:
            line = "\t" + line
        text.append(line)
        n += len(line)
    return "".join(text).encode(), rng.randbytes(32 << 20)


def sizes(rng, nfiles, total):
    raw = [min(rng.lognormvariate(8.5, 1.6), 4 << 20) for _ in range(nfiles)]
    scale = total / sum(raw)
    return [max(0, int(s * scale)) for s in raw]


def write_file(path, pool, size, rng):
    with open(path, "wb") as f:
        left = size
        while left > 0:
            chunk = min(left, 1 << 20, len(pool) - 1)
            off = rng.randrange(0, len(pool) - chunk)
            f.write(pool[off:off + chunk])
            left -= chunk


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    top, nfiles, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    part = top + ".partial"
    shutil.rmtree(part, ignore_errors=True)
    text, rnd = make_pools(rng)
    for i, size in enumerate(sizes(rng, nfiles, total)):
        leaf = os.path.join(part, "d%03d" % (i // (PER_DIR * SUBDIRS)),
                            "s%02d" % (i // PER_DIR % SUBDIRS))
        if i % PER_DIR == 0:
            os.makedirs(leaf, exist_ok=True)
        binary = i % 2 == 1
        name = "f%04d.%s" % (i % PER_DIR, "bin" if binary else ("c" if i % 4 else "txt"))
        write_file(os.path.join(leaf, name), rnd if binary else text, size, rng)
    os.rename(part, top)


if __name__ == "__main__":
    main()
