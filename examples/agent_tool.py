#!/usr/bin/python3
"""agent_tool.py — a shell tool for a coding agent, backed by txguard.

The agent calls shell(command); it gets back text it can read: the output,
what txguard denied and why, and whether its changes were kept or undone.
Wire `shell` into your framework's tool registry as a function tool.

    python3 examples/agent_tool.py /path/to/repo 'make test'
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))

from txguard_adapter import run  # noqa: E402


def shell(command, workspace, timeout=300):
    """Run `command` in `workspace` as a transaction; return a text summary."""
    r = run(command, workspace, timeout=timeout, strip_secrets=True)
    lines = [r["stdout"] or "", r["stderr"] or ""]
    if r["outcome"] == "committed":
        lines.append(f"[exit {r['returncode']}; {r['changes']['total']} path(s) changed and kept]")
    elif r["outcome"] == "rolled_back":
        lines.append(f"[exit {r['returncode']} ({r['end_reason']}); every change was undone, "
                     "the workspace is as it was before this command]")
    else:
        lines.append(f"[txguard: {r['outcome']}: {r.get('error') or 'see stderr'}]")
    for d in r["decisions"]:
        if d["action"] in ("deny", "kill"):
            lines.append(f"[denied by rule {d['rule']}: {d['reason']}]")
    return "\n".join(line for line in lines if line)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: agent_tool.py WORKSPACE COMMAND")
    print(shell(sys.argv[2], sys.argv[1]))
