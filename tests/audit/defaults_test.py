#!/usr/bin/env python3
"""defaults_test.py TXGUARD SOURCE_DIR — every default that `txguard --help`
states agrees with txguard(1), and the defaults that live in the policy
(limits.max_procs) agree with policy.d, --help, txguard(1) and
txguard-policy(5). Exits 1 naming each disagreement."""
import glob
import re
import subprocess
import sys

txguard, src = sys.argv[1], sys.argv[2]
problems = []


def help_blocks(text):
    """{option: its --help text, continuation lines joined}."""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^  (?:-\w, )?\s*(--[a-z][a-z0-9-]*)", line)
        if m:
            cur = m.group(1)
            blocks[cur] = line
        elif cur and re.match(r"^ {20,}\S", line):
            blocks[cur] += " " + line.strip()
        else:
            cur = None
    return {k: re.sub(r"\s+", " ", v) for k, v in blocks.items()}


def help_default(text):
    m = re.search(r"\(default:? ([^),;]+)", text)
    if m:
        return m.group(1).strip()
    m = re.search(r"(\S+) \(default\)", text)
    return m.group(1) if m else None


def roff_text(lines):
    out = []
    for line in lines:
        if line.startswith(".\\\""):
            continue
        line = re.sub(r"^\.(?:B|I|BR|BI|IR|RB|RI|IB)\s+", "", line)
        line = line.replace('"', "")
        line = re.sub(r"\\f[BIRP]", "", line)
        line = line.replace("\\-", "-").replace("\\(em", "-").replace("\\(lq", "'").replace("\\(rq", "'")
        line = line.replace("\\&", "").replace("\\~", " ")
        out.append(line)
    return re.sub(r"\s+", " ", " ".join(out))


def man_entries(path):
    """{--option: the text of its .TP entry}."""
    lines = open(path).read().splitlines()
    entries = {}
    i = 0
    while i < len(lines):
        if lines[i] == ".TP" and i + 1 < len(lines):
            tag = lines[i + 1]
            j = i + 2
            while j < len(lines) and not re.match(r"^\.(TP|SH|SS|PP)\b", lines[j]):
                j += 1
            for opt in re.findall(r"\\-\\-([a-z][a-z0-9\\-]*)", tag):
                entries.setdefault("--" + opt.replace("\\-", "-"), roff_text(lines[i + 2:j]))
            i = j
        else:
            i += 1
    return entries


def says_default(text, value):
    v = re.escape(value)
    return bool(re.search(rf"\b{v}\b.{{0,12}}\(the default|\(default:? {v}\b|\bdefault:? {v}\b", text))


helptext = subprocess.run([txguard, "--help"], capture_output=True, text=True, check=True).stdout
blocks = help_blocks(helptext)
man = man_entries(f"{src}/docs/txguard.1")
checked = 0
for opt, text in sorted(blocks.items()):
    value = help_default(text)
    if not value or value.startswith("the "):
        continue
    checked += 1
    entry = man.get(opt)
    if entry is None:
        problems.append(f"{opt}: no entry in txguard.1")
    elif not says_default(entry, value):
        problems.append(f"{opt}: --help says the default is {value!r}, txguard.1 does not: {entry[:200]}")

# limits.max_procs: the policy's value is what --help and both pages quote.
values = []
for f in sorted(glob.glob(f"{src}/policy.d/*.yaml")):
    values += re.findall(r"^\s+max_procs:\s*(\d+)", open(f).read(), re.M)
if len(values) != 1:
    problems.append(f"policy.d sets limits.max_procs {len(values)} times, expected once")
else:
    mp = values[0]
    if f"{mp} in the installed policy" not in blocks.get("--max-procs", ""):
        problems.append(f"--help --max-procs does not quote the policy's {mp}: {blocks.get('--max-procs')}")
    if mp not in man.get("--max-procs", ""):
        problems.append(f"txguard.1 --max-procs does not quote the policy's {mp}")
    page5 = roff_text(open(f"{src}/docs/txguard-policy.5").read().splitlines())
    if f"max_procs: {mp}" not in page5:
        problems.append(f"txguard-policy(5) does not give the installed max_procs {mp}")
    builtin = re.search(r"(\d+) without one", blocks.get("--max-procs", ""))
    if not builtin or builtin.group(1) not in man.get("--max-procs", "") or \
            f"max_procs ? fi.max_procs : {builtin.group(1)}" not in open(f"{src}/cmd/run.c").read():
        problems.append("the built-in max-procs (no policy value) differs between --help, txguard.1 and run.c")
    checked += 1

for p in problems:
    print("FAIL:", p)
print(f"defaults: {checked} checked, {len(problems)} disagree")
sys.exit(1 if problems or checked < 8 else 0)
