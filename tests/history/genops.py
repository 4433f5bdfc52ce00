#!/usr/bin/env python3
"""genops.py SEED RUN — print a POSIX sh script of random file operations
(seeded, reproducible) for one run of the history property test. The names
come from a small namespace so that runs collide on the same paths; an
operation that does not apply fails quietly and the script exits 0."""
import random
import sys

seed, run = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed * 1000 + run)
dirs = ["", "d1/", "d2/", "d1/e/"]
names = ["a", "b", "c", "sp ace", "n\nl"]


def path():
    return rng.choice(dirs) + rng.choice(names)


def q(p):
    return "'" + p.replace("'", "'\\''") + "'"


def data():
    return "".join(rng.choice("abcdefgh \n") for _ in range(rng.randint(0, 40)))


ops = [
    lambda: f"mkdir -p {q(rng.choice(dirs[1:]))}",
    lambda: f"printf %s {q(data())} > {q(path())}",
    lambda: f"printf %s {q(data())} >> {q(path())}",
    lambda: f"true > {q(path())}",
    lambda: f"head -c {rng.randint(1, 3000)} /dev/urandom > {q(path())}",
    lambda: f"rm -f {q(path())}",
    lambda: f"rm -rf {q(rng.choice(dirs[1:]))}",
    lambda: f"mv -f {q(path())} {q(path())}",
    lambda: f"mv -f {q(rng.choice(dirs[1:]).rstrip('/'))} {q('moved' + str(rng.randint(1, 2)))}",
    lambda: f"ln -sf {q(rng.choice(names))} {q(path())}",
    lambda: f"ln -f {q(path())} {q(path())}",
    lambda: f"chmod {rng.choice(['600', '644', '755', '444'])} {q(path())}",
    lambda: f"touch -h -d @{rng.randint(10**8, 2 * 10**9)} {q(path())}",
    lambda: f"mkfifo {q(path())}",
    lambda: f"rmdir {q(rng.choice(dirs[1:]))}",
]
print("set +e")
for _ in range(rng.randint(3, 15)):
    print("{ " + rng.choice(ops)() + "; } 2>/dev/null")
print("exit 0")
