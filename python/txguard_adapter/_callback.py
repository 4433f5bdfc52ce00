"""run(approver=callback): serve a Python callable as txguard's --approver.

For one run, a thread listens on a unix socket in a private temporary
directory (mode 0700: only this user reaches it). txguard's --approver is
the relay _approve.py, which passes each question (one JSON object) to the
socket and prints the answer line the callback's result becomes. Questions
are answered one at a time, so the callback is never called concurrently.
"""

import json
import os
import shlex
import shutil
import socket
import sys
import tempfile
import threading
from typing import Any, Callable, Dict, Mapping, Union

from ._approve import _read_all

ApproverAnswer = Union[str, Mapping[str, Any]]
ApproverCallback = Callable[[Dict[str, Any]], ApproverAnswer]

# How long close() waits for a callback still deciding when the run ended
# (txguard has given up on it already; the thread is a daemon and is left).
_JOIN_WAIT = 5.0
_SUN_PATH_MAX = 108


def _json_string(s: str) -> str:
    """A JSON string txguard's answer parser reads: only \\" and \\\\ escaped,
    no control characters (made spaces), UTF-8 as is."""
    s = "".join(" " if ord(c) < 0x20 or c == "\x7f" else c for c in s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _line(decision: str, reason: str, remember: bool = False) -> str:
    fields = [f'"decision": {_json_string(decision)}']
    if remember:
        fields.append('"remember": true')
    if reason:
        fields.append(f'"reason": {_json_string(reason[:390])}')
    return "{" + ", ".join(fields) + "}\n"


def _deny(why: str) -> str:
    return _line("deny", why)


def answer_line(result: Any) -> str:
    """The answer line for what the callback returned; anything but "allow",
    "deny" or a dict {"decision": "allow"|"deny", "remember": bool, "reason":
    str} is a deny that says what was wrong."""
    if isinstance(result, str):
        if result in ("allow", "deny"):
            return _line(result, "")
        return _deny(f"the approver callback returned {result[:80]!r}, not 'allow' or 'deny'")
    if isinstance(result, Mapping):
        decision = result.get("decision")
        remember = result.get("remember", False)
        reason = result.get("reason", "")
        unknown = sorted(str(k) for k in result if k not in ("decision", "remember", "reason"))
        if decision not in ("allow", "deny"):
            return _deny(f"the approver callback's decision was {decision!r}, not 'allow' or 'deny'")
        if not isinstance(remember, bool) or not isinstance(reason, str) or unknown:
            return _deny("the approver callback's answer is not {decision, remember: bool, "
                         f"reason: str}}: {dict(result)!r}"[:300])
        return _line(decision, reason, remember)
    return _deny(f"the approver callback returned a {type(result).__name__}, "
                 "not 'allow', 'deny' or a dict")


def _ask(callback: ApproverCallback, question: bytes) -> str:
    try:
        decision = json.loads(question.decode("utf-8"))
        if not isinstance(decision, dict):
            raise ValueError("not a JSON object")
    except ValueError as e:
        return _deny(f"the adapter could not read txguard's question: {e}")
    try:
        result = callback(decision)
    except Exception as e:  # the callback's failure is a deny, never a crash of the run
        return _deny(f"the approver callback raised {type(e).__name__}: {e}")
    return answer_line(result)


def _python() -> str:
    return sys.executable or shutil.which("python3") or "python3"


class CallbackServer:
    """The socket, its thread and the --approver command; a context manager."""

    def __init__(self, callback: ApproverCallback) -> None:
        self._callback = callback
        self._stop = threading.Event()
        self._dir = tempfile.mkdtemp(prefix="txguard-approver-")  # mode 0700
        self.path = os.path.join(self._dir, "approver.sock")
        if len(os.fsencode(self.path)) >= _SUN_PATH_MAX and os.path.isdir("/tmp"):
            os.rmdir(self._dir)   # a long $TMPDIR: a socket path must fit sun_path
            self._dir = tempfile.mkdtemp(prefix="txguard-approver-", dir="/tmp")
            self.path = os.path.join(self._dir, "approver.sock")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.bind(self.path)
            self._sock.listen(8)
        except OSError:
            self._sock.close()
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        # The relay runs by path with -I: it needs neither the package
        # installed nor this process's sys.path or PYTHONPATH.
        relay = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_approve.py")
        self.command = shlex.join([_python(), "-I", relay, self.path])
        self._thread = threading.Thread(target=self._serve, name="txguard-approver", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                if self._stop.is_set():
                    return
                try:
                    question = _read_all(conn)
                    conn.sendall(_ask(self._callback, question).encode("utf-8"))
                except (OSError, ValueError):
                    continue   # the relay went away (txguard's timeout): it denies

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        # Wake the accept() with a connection of our own.
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(self.path)
        except OSError:
            pass
        self._thread.join(_JOIN_WAIT)
        self._sock.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> "CallbackServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

