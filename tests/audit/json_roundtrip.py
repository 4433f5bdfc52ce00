#!/usr/bin/python3
"""Check tg_json output written by json_test.c (test json/python_roundtrip).

FILE holds JSON Lines, one per random byte string, of the form
  {"raw": "<hex of the bytes, written by the test itself>", "s": <kv_str>, [...]}
plus "argv" (kv_strv of three strings). Every line must parse, every string
must equal what Python's own decoder makes of the bytes with errors=replace,
and the *_hex fields must give the exact bytes back.
"""
import json
import sys


def exact(obj, key):
    s = obj[key]
    h = obj.get(key + "_hex")
    return bytes.fromhex(h) if h is not None else s.encode()


def main(path):
    n = 0
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")          # strict: the file must be valid UTF-8
    for line in text.split("\n")[:-1]:
        obj = json.loads(line)
        raw = bytes.fromhex(obj["raw"])
        if obj["s"] != raw.decode("utf-8", "replace"):
            sys.exit(f"line {n}: s {obj['s']!r} != {raw.decode('utf-8', 'replace')!r}")
        if exact(obj, "s") != raw:
            sys.exit(f"line {n}: exact bytes differ: {exact(obj, 's')!r} != {raw!r}")
        valid = True
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            valid = False
        if valid == ("s_hex" in obj):
            sys.exit(f"line {n}: s_hex present={'s_hex' in obj} for valid={valid}")
        argv = obj["argv"]
        hexes = obj.get("argv_hex", [None] * len(argv))
        parts = [raw, b"plain", raw[::-1]]
        if len(argv) != 3 or len(hexes) != 3:
            sys.exit(f"line {n}: argv lengths {len(argv)} {len(hexes)}")
        for a, h, p in zip(argv, hexes, parts):
            got = bytes.fromhex(h) if h is not None else a.encode()
            if got != p or a != p.decode("utf-8", "replace"):
                sys.exit(f"line {n}: argv element {a!r}/{h!r} != {p!r}")
        n += 1
    print(f"{n} lines round-tripped")
    if n == 0:
        sys.exit("no lines")


if __name__ == "__main__":
    main(sys.argv[1])
