#!/usr/bin/python3
"""agent_tool.py — a shell tool for a coding agent, backed by txguard.

The agent calls shell(command); it gets back text it can read: the output,
what txguard denied and why, and whether its changes were kept or undone.
Wire `shell` into your framework's tool registry as a function tool.

    python3 examples/agent_tool.py /path/to/repo 'make test'
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from txguard_adapter import run  # noqa: E402


def shell(command, cwd, timeout=300):
    """Run `command` in `cwd` as a transaction; return text the agent can read.

    The workspace is txguard's choice: the top of the git work tree that
    holds cwd (else cwd itself), so the whole project is journaled.
    """
    return run(command, cwd=cwd, timeout=timeout, strip_secrets=True, merge_output=True).text


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: agent_tool.py DIR COMMAND")
    print(shell(sys.argv[2], sys.argv[1]))
