"""An MCP server for txguard: `python -m txguard_adapter.mcp [--workspace DIR] [--policy P]...`

Speaks the Model Context Protocol over stdio (JSON-RPC 2.0, one message per
line), standard library only, and exposes four tools:

    run_command  run a shell command (or an argv) as a transaction: its output,
                 what was denied and why, and whether its changes were kept or
                 undone
    undo         undo a run (default: the newest) and every later one
    log          the workspace's runs, newest first
    explain      the verdict txguard would give a command, without running it

Every command runs with the server's working directory (or the tool call's
`cwd`) as its current directory; the workspace is txguard's default (the top
of the enclosing git work tree, ...) unless --workspace or the call's
`workspace` says otherwise. A client config, e.g.:

    {"command": "python3", "args": ["-m", "txguard_adapter.mcp"], "cwd": "/path/to/repo"}
"""

import argparse
import json
import sys
from typing import Any, Callable, Dict, List, Optional, TextIO

from . import DEFAULT_TIMEOUT, TxguardError, explain, log, run, undo

PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
SERVER_INFO = {"name": "txguard", "version": "0.1.0"}

_CWD = {"type": "string", "description": "directory to run in (default: the server's)"}
_WS = {"type": "string", "description": "the workspace to journal (default: txguard's choice: "
                                        "the top of the git work tree, else cwd)"}

TOOLS: List[Dict[str, Any]] = [
    {
        "name": "run_command",
        "description": ("Run a shell command as a transaction under txguard. If it fails, times out "
                        "or is killed, every change it made in the workspace is undone. Dangerous "
                        "operations (force pushes, deleting outside the workspace, ...) are refused "
                        "with the rule, the reason and what to do instead."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "command": {"description": "a shell command line, or an argv array",
                            "anyOf": [{"type": "string"},
                                      {"type": "array", "items": {"type": "string"}}]},
                "cwd": _CWD,
                "workspace": _WS,
                "timeout": {"type": "number", "description": f"seconds (default {DEFAULT_TIMEOUT:g})"},
            },
            "required": ["command"],
        },
    },
    {
        "name": "undo",
        "description": ("Undo a committed run (default: the newest) and every run after it. "
                        "Refused, naming the paths, when they were changed since outside txguard."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "a run id, a unique prefix, its random "
                                                        "suffix, or 'last'"},
                "cwd": _CWD,
                "workspace": _WS,
            },
        },
    },
    {
        "name": "log",
        "description": "The workspace's runs under txguard, newest first, with what each changed.",
        "inputSchema": {
            "type": "object",
            "properties": {"cwd": _CWD, "workspace": _WS,
                           "limit": {"type": "integer", "description": "at most this many (default 20)"}},
        },
    },
    {
        "name": "explain",
        "description": "The verdict txguard's policy gives a command line, and why, without running it.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "command": {"description": "an argv array, or a command line split on blanks",
                            "anyOf": [{"type": "string"},
                                      {"type": "array", "items": {"type": "string"}}]},
                "cwd": _CWD,
                "workspace": _WS,
            },
            "required": ["command"],
        },
    },
]


class ToolError(Exception):
    """A tool call that failed: reported to the model as isError content."""


class Server:
    def __init__(self, workspace: Optional[str] = None, policy: Optional[List[str]] = None,
                 txguard: Optional[str] = None) -> None:
        self.workspace = workspace
        self.policy = policy or []
        self.txguard = txguard
        self.tools: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]] = {
            "run_command": self.run_command, "undo": self.undo, "log": self.log,
            "explain": self.explain,
        }

    def _where(self, args: Dict[str, Any]) -> Dict[str, Any]:
        return {"cwd": args.get("cwd"), "workspace": args.get("workspace") or self.workspace,
                "txguard": self.txguard}

    def run_command(self, args: Dict[str, Any]) -> Dict[str, Any]:
        cmd = args.get("command")
        if not cmd or not isinstance(cmd, (str, list)):
            raise ToolError("command: give a shell command line or an argv array")
        timeout = args.get("timeout", DEFAULT_TIMEOUT)
        r = run(cmd, timeout=timeout, policy=self.policy, merge_output=True, **self._where(args))
        data = {"exit_code": r.returncode, "outcome": r.outcome, "end_reason": r.end_reason,
                "workspace": r.workspace, "transaction_id": r.report.get("transaction_id"),
                "changed": r.changed_paths,
                "denials": [{"rule": d.rule, "reason": d.reason, "instead": d.instead,
                             "what": d.what} for d in r.denials]}
        return {"text": r.text, "data": data, "error": not r.ok}

    def undo(self, args: Dict[str, Any]) -> Dict[str, Any]:
        u = undo(args.get("id"), **self._where(args))
        if u.get("refused"):
            paths = ", ".join(c.get("path", "?") for c in u.get("conflicts", []))
            return {"text": f"undo refused: changed outside txguard since: {paths}", "data": u,
                    "error": True}
        if not u.get("ok"):
            return {"text": f"undo failed: {u.get('error')}", "data": u, "error": True}
        return {"text": f"undone: {', '.join(u.get('undone', [])) or 'nothing'}", "data": u,
                "error": False}

    def log(self, args: Dict[str, Any]) -> Dict[str, Any]:
        runs = log(**self._where(args))[: int(args.get("limit") or 20)]
        lines = [f"{e['id']}  {e['outcome']}  {e['command']}" for e in runs]
        return {"text": "\n".join(lines) or "no runs yet", "data": {"runs": runs}, "error": False}

    def explain(self, args: Dict[str, Any]) -> Dict[str, Any]:
        cmd = args.get("command")
        if isinstance(cmd, str):
            cmd = cmd.split()
        if not cmd:
            raise ToolError("command: give an argv array or a command line")
        w = self._where(args)
        v = explain(cmd, cwd=w["cwd"], workspace=w["workspace"], policy=self.policy,
                    txguard=self.txguard)
        if v.get("verdict") == "allow":
            text = f"{' '.join(cmd)}: allowed"
        else:
            text = f"{' '.join(cmd)}: {v.get('verdict')} by rule {v.get('rule')}: {v.get('reason')}"
        return {"text": text, "data": v, "error": False}

    # ---- JSON-RPC ----

    def call_tool(self, params: Dict[str, Any]) -> Dict[str, Any]:
        name = params.get("name")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise KeyError(f"unknown tool {name!r}: tools/list has them")
        try:
            out = tool(params.get("arguments") or {})
        except (ToolError, TxguardError, ValueError, TypeError) as e:
            return {"content": [{"type": "text", "text": f"txguard: {e}"}], "isError": True}
        return {"content": [{"type": "text", "text": out["text"]}],
                "structuredContent": out["data"], "isError": out["error"]}

    def handle(self, msg: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        method, mid = msg.get("method"), msg.get("id")
        if method is None or "id" not in msg:
            return None  # a response or a notification (notifications/initialized ...)
        try:
            if method == "initialize":
                asked = (msg.get("params") or {}).get("protocolVersion")
                result: Any = {
                    "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0],
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": SERVER_INFO,
                    "instructions": "Run shell commands with run_command: failed commands are "
                                    "rolled back; denied operations say what to do instead.",
                }
            elif method == "ping":
                result = {}
            elif method == "tools/list":
                result = {"tools": TOOLS}
            elif method == "tools/call":
                result = self.call_tool(msg.get("params") or {})
            else:
                return _error(mid, -32601, f"method not found: {method}")
        except KeyError as e:
            return _error(mid, -32602, str(e.args[0]))
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    def serve(self, stdin: TextIO, stdout: TextIO) -> None:
        for line in stdin:
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError as e:
                reply: Optional[Dict[str, Any]] = _error(None, -32700, f"parse error: {e}")
            else:
                reply = self.handle(msg) if isinstance(msg, dict) else \
                    _error(None, -32600, "invalid request: batches are not supported")
            if reply is not None:
                stdout.write(json.dumps(reply) + "\n")
                stdout.flush()


def _error(mid: Any, code: int, message: str) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m txguard_adapter.mcp",
                                 description="MCP server (stdio) for txguard")
    ap.add_argument("--workspace", help="the workspace (default: txguard's choice from cwd)")
    ap.add_argument("--policy", action="append", default=[], help="extra policy file (repeatable)")
    ap.add_argument("--txguard", help="the txguard binary (default: $TXGUARD, else PATH)")
    a = ap.parse_args(argv)
    Server(a.workspace, a.policy, a.txguard).serve(sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
