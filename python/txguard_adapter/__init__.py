"""txguard_adapter: run a command under txguard from Python; read what happened.

For the tool-call adapters of coding agents. Standard library only, Python >= 3.9.

    from txguard_adapter import run
    r = run(["make", "test"], cwd="/path/to/repo/src", timeout=600)
    print(r.text)              # a short summary an LLM can read
    if not r.ok:               # non-zero exit, or the workspace was restored
        ...

run() returns a Result: the exit code (txguard's contract: the command's own
code, 128+N for signal N, 125 txguard failed, 126/127 exec errors), the
outcome ("committed", "rolled_back", "restore_failed"), the changed paths,
the denials (rule, reason, what to do instead; one per rule and target), the
command's output, and the full JSON report (docs/schema/report.schema.json)
as .report. Whether the workspace was restored is .outcome, never guessed
from the code.

TxguardError is raised when nothing could run: txguard missing, a bad
workspace or cwd, a policy with errors (.policy_errors lists each as
"file:line:col: message"), a setup failure (.result has its report); and,
with check=True, when the command failed (CommandFailed, with .result).

run(approver=callback) answers the policy's `action: ask` rules in Python:
callback(decision) returns "allow", "deny" or {"decision": ..., "remember":
True, "reason": ...}; it is served from a thread for the run, and an exception
or any other result denies the call.

undo(), log(), status() and explain() wrap the subcommands of the same
names; run_async() is run() for asyncio (its approver callback may be async). `python -m txguard_adapter.mcp`
serves run_command, undo, log and explain to MCP clients.
"""

import asyncio
import contextlib
import functools
import inspect
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from ._callback import ApproverAnswer, ApproverCallback, CallbackServer

__all__ = [
    "run", "run_async", "undo", "redo", "log", "status", "explain", "build_argv", "find_txguard",
    "Result", "Denial", "TxguardError", "CommandFailed", "DEFAULT_TIMEOUT", "Approver",
    "ApproverAnswer",
]

# A command that never ends blocks the agent that called it: bound it.
DEFAULT_TIMEOUT = 600.0
# How long txguard may take to roll back after our SIGTERM.
_TERM_WAIT = 60.0

Command = Union[str, Sequence[Union[str, "os.PathLike[str]"]]]
PathArg = Union[str, "os.PathLike[str]"]
# A shell command (txguard's --approver CMD) or a callback (see run()).
Approver = Union[str, ApproverCallback]

_DENIAL_PREFIXES = ("txguard: denied ", "txguard: killed the tree at ", "txguard: would deny ",
                    "txguard: would kill the tree at ")
_POLICY_ERROR = re.compile(r"^(?:txguard: )?([^\s:][^:]*):(\d+):(\d+): (.+)$")


class TxguardError(RuntimeError):
    """Nothing (or not what was asked) ran. The message is one line naming the fix."""

    def __init__(self, message: str, *, returncode: Optional[int] = None,
                 stderr: Optional[str] = None, policy_errors: Optional[List[str]] = None,
                 result: Optional["Result"] = None) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.policy_errors = policy_errors or []
        self.result = result


class CommandFailed(TxguardError):
    """check=True and the command failed (or was rolled back): .result says how."""


@dataclass
class Denial:
    """One refused call: which rule, why, and what to do instead."""
    rule: str
    reason: str
    instead: str
    action: str            # "deny" or "kill"
    what: str              # e.g. "exec `git push --force`", "write /etc/hosts"
    count: int = 1         # how many calls this line stands for

    def __str__(self) -> str:
        return f"{self.what} denied by rule {self.rule}: {self.reason}. Instead: {self.instead}"


@dataclass
class Result:
    """What one run did. .report is the full JSON report."""
    returncode: int
    outcome: str
    end_reason: Optional[str]
    workspace: Optional[str]
    workspace_source: Optional[str]
    changed: Dict[str, List[str]]
    denials: List[Denial]
    stdout: Optional[str]
    stderr: Optional[str]
    output: Optional[str]
    report: Dict[str, Any] = field(repr=False)

    @property
    def ok(self) -> bool:
        """Exit 0 and the changes kept."""
        return self.returncode == 0 and self.outcome == "committed"

    @property
    def changed_paths(self) -> List[str]:
        paths: List[str] = []
        for kind in ("created", "modified", "deleted", "metadata"):
            paths += self.changed.get(kind, [])
        renamed = (self.report.get("changes") or {}).get("renamed") or []
        paths += [f"{r['from']} -> {r['to']}" for r in renamed]
        return paths

    @property
    def text(self) -> str:
        """A short account for an LLM: output, denials, and what became of the changes."""
        parts = []
        if self.output:
            out = self.output if len(self.output) <= 8000 else "[...]\n" + self.output[-8000:]
            parts.append(out.rstrip("\n"))
        for d in self.denials:
            parts.append(f"[{d}]")
        n = len(self.changed_paths)
        if self.outcome == "committed":
            kept = f"{n} path(s) changed and kept" if n else "nothing changed"
            parts.append(f"[exit {self.returncode}; {kept}]")
        elif self.outcome == "rolled_back":
            why = self.end_reason if self.end_reason != "exited" else f"exit {self.returncode}"
            undone = (f"all {n} change(s) were undone; the workspace is as it was before this command"
                      if n else "it changed nothing, so nothing was undone")
            parts.append(f"[{why}; {undone}]")
        else:
            parts.append(f"[txguard: {self.outcome}: {self.report.get('error') or 'see stderr'}; "
                         "run 'txguard recover' in the workspace]")
        return "\n".join(parts)

    def __getitem__(self, key: str) -> Any:
        """result["outcome"] etc.: the report's fields, for code written against the dict."""
        return self.report[key]


def find_txguard(txguard: Optional[PathArg] = None) -> str:
    """The txguard binary: the argument, else $TXGUARD, else txguard on PATH."""
    path = os.fspath(txguard) if txguard else os.environ.get("TXGUARD") or shutil.which("txguard")
    if not path:
        raise TxguardError("txguard not found: install it, set $TXGUARD, or pass txguard=PATH")
    return path


def _duration(value: Union[int, float, str]) -> str:
    """Seconds (int/float) or a txguard duration string ("500ms", "2m")."""
    if isinstance(value, bool):
        raise TypeError("a duration is seconds or a string like '30s'")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ValueError("a duration must be positive")
        return f"{int(round(value * 1000))}ms"
    return str(value)


def _seconds(value: Union[int, float, str]) -> Optional[float]:
    if isinstance(value, (int, float)):
        return float(value)
    for suffix, scale in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if value.endswith(suffix):
            try:
                return float(value[: -len(suffix)]) * scale
            except ValueError:
                return None
    try:
        return float(value)
    except ValueError:
        return None


def _as_list(v: Union[None, PathArg, Sequence[PathArg]]) -> List[str]:
    if v is None:
        return []
    if isinstance(v, (str, os.PathLike)):
        return [os.fspath(v)]
    return [os.fspath(x) for x in v]


def build_argv(cmd: Command, *, report_fd: int, workspace: Optional[PathArg] = None,
               txguard: Optional[PathArg] = None, policy: Union[None, PathArg, Sequence[PathArg]] = None,
               no_default_policy: bool = False, state_dir: Optional[PathArg] = None,
               timeout: Union[None, int, float, str] = None, approver: Optional[str] = None,
               approver_timeout: Union[None, int, float, str] = None,
               rollback_on: Union[None, str, Sequence[int]] = None, audit_only: bool = False,
               strip_secrets: bool = False, env_allow: Sequence[str] = (), env_deny: Sequence[str] = (),
               max_procs: Optional[int] = None, memory_limit: Optional[str] = None,
               max_file_size: Optional[str] = None, kill_after: Union[None, int, float, str] = None,
               grace: Union[None, int, float, str] = None, log: Optional[PathArg] = None,
               log_level: Optional[str] = None, lock: Optional[str] = None, tx: Optional[str] = None,
               tx_failure: Optional[str] = None, force_workspace: bool = False, quiet: bool = False,
               extra_args: Sequence[str] = ()) -> List[str]:
    """The txguard command line of a run(); exposed for tests and logging.

    cmd is a list (run as is) or one string (run with /bin/sh -c).
    """
    if isinstance(cmd, str):
        cmd = ["/bin/sh", "-c", cmd]
    argv_cmd = [os.fspath(c) for c in cmd]
    if not argv_cmd:
        raise ValueError("empty command")
    argv = [find_txguard(txguard), "--report-fd", str(report_fd), "--color", "never"]
    if workspace is not None:
        argv += ["--workspace", os.fspath(workspace)]
    if force_workspace:
        argv.append("--force-workspace")
    for p in _as_list(policy):
        argv += ["--policy", p]
    if no_default_policy:
        argv.append("--no-default-policy")
    if state_dir is not None:
        argv += ["--state-dir", os.fspath(state_dir)]
    for flag, dur in (("--timeout", timeout), ("--kill-after", kill_after), ("--grace", grace),
                      ("--approver-timeout", approver_timeout)):
        if dur is not None:
            argv += [flag, _duration(dur)]
    if approver is not None:
        argv += ["--approver", approver]
    if rollback_on is not None:
        if not isinstance(rollback_on, str):
            rollback_on = ",".join(str(int(c)) for c in sorted(rollback_on))
        argv += ["--rollback-on", rollback_on]
    if audit_only:
        argv.append("--audit-only")
    if strip_secrets:
        argv.append("--strip-secrets")
    for pattern in _as_list(env_allow):
        argv += ["--env-allow", pattern]
    for pattern in _as_list(env_deny):
        argv += ["--env-deny", pattern]
    for flag, value in (("--max-procs", max_procs), ("--memory-limit", memory_limit),
                        ("--max-file-size", max_file_size), ("--log-level", log_level),
                        ("--lock", lock), ("--tx", tx), ("--tx-failure", tx_failure)):
        if value is not None:
            argv += [flag, str(value)]
    if log is not None:
        argv += ["--log", os.fspath(log)]
    if quiet:
        argv.append("--quiet")
    argv += list(extra_args)
    return argv + ["--"] + argv_cmd


def _decode(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else data.decode("utf-8", "replace")


def _what(d: Mapping[str, Any]) -> str:
    if d.get("op") == "exec" and d.get("argv"):
        return "exec `" + " ".join(d["argv"])[:200] + "`"
    target = d.get("path") or d.get("addr") or d.get("target") or ""
    return f"{d.get('op') or d.get('syscall') or 'call'} {target}".strip()


def _instead(d: Mapping[str, Any]) -> str:
    given = d.get("instead") or d.get("hint")
    if given:
        return str(given)
    if d.get("op") == "exec":
        return ("do the task without this command, or ask the user; if the job really needs it, "
                f"the user can override rule {d.get('rule')} by id in the workspace's .txguard.yaml")
    return ("keep the work inside the workspace; if the job really needs this, the user can "
            f"override rule {d.get('rule')} by id in the workspace's .txguard.yaml")


def _denials(report: Mapping[str, Any]) -> List[Denial]:
    """One Denial per (rule, target): a shell walking $PATH is one refusal."""
    seen: Dict[Any, Denial] = {}
    for d in report.get("decisions") or []:
        if d.get("action") not in ("deny", "kill"):
            continue
        what = _what(d)
        key = (d.get("rule"), what)
        if key in seen:
            seen[key].count += 1
            continue
        seen[key] = Denial(rule=str(d.get("rule")), reason=str(d.get("reason") or ""),
                           instead=_instead(d), action=str(d["action"]), what=what)
    return list(seen.values())


def _policy_errors(stderr: Optional[str]) -> List[str]:
    return [m.group(0).replace("txguard: ", "", 1)
            for m in (_POLICY_ERROR.match(line) for line in (stderr or "").splitlines()) if m]


def _check_dir(kind: str, path: Optional[PathArg]) -> None:
    if path is None:
        return
    p = os.fspath(path)
    if not os.path.exists(p):
        raise TxguardError(f"{kind} {p} does not exist: create it or pass an existing directory")
    if not os.path.isdir(p):
        raise TxguardError(f"{kind} {p} is not a directory: pass a directory")


def _result(proc_rc: int, report: Dict[str, Any], stdout: Optional[str], stderr: Optional[str],
            merged: bool) -> Result:
    changes = report.get("changes") or {}
    changed = {k: list(changes.get(k) or []) for k in ("created", "modified", "deleted", "metadata")}
    if merged:
        output = stdout
    else:
        output = "".join(x for x in (stdout, stderr) if x) or None
    return Result(returncode=proc_rc, outcome=report.get("outcome", "setup_failed"),
                  end_reason=report.get("end_reason"), workspace=report.get("workspace"),
                  workspace_source=report.get("workspace_source"), changed=changed,
                  denials=_denials(report), stdout=stdout, stderr=stderr, output=output,
                  report=report)


def run(cmd: Command, *, cwd: Optional[PathArg] = None, workspace: Optional[PathArg] = None,
        timeout: Union[None, int, float, str] = DEFAULT_TIMEOUT, check: bool = False,
        policy: Union[None, PathArg, Sequence[PathArg]] = None,
        env: Optional[Mapping[str, str]] = None, approver: Optional[Approver] = None,
        input: Union[None, str, bytes] = None, merge_output: bool = False,
        txguard: Optional[PathArg] = None, wait_timeout: Optional[float] = None,
        **options: Any) -> Result:
    """Run cmd under txguard; return a Result (see the module doc).

    cwd: where the command runs (default: this process's). workspace: what is
    journaled (default: txguard's choice from cwd: the top of the enclosing git
    work tree, or the nearest directory with a .txguard.yaml, else cwd).
    timeout: seconds or "5m" (default 600 s; None: no bound). check: raise
    CommandFailed unless the command exited 0 and its changes were kept.
    policy: extra policy file(s). env: the command's environment. approver:
    who answers the policy's `action: ask` rules: a shell command, passed to
    txguard as --approver; or a callable taking the pending decision (a dict:
    rule, reason, op, path, argv...) and returning "allow", "deny" or a dict
    {"decision": "allow"|"deny", "remember": True, "reason": "..."}, served
    from a thread of this process for the run (one question at a time; if it
    raises or returns anything else the call is denied, the reason says why;
    approver_timeout="5m" gives a human longer than txguard's 30 s). input: fed
    to stdin (else /dev/null: txguard is headless). merge_output: stderr into
    stdout, in order, as .output. wait_timeout: how long to wait for txguard
    itself (default timeout + 60 s); past it txguard gets SIGTERM, rolls back
    and reports end_reason "interrupted". Other keywords map to build_argv().
    """
    _check_dir("cwd", cwd)
    _check_dir("workspace", workspace)
    if isinstance(input, str):
        input = input.encode()
    if wait_timeout is None and timeout is not None:
        secs = _seconds(timeout)
        wait_timeout = None if secs is None else secs + _TERM_WAIT
    with contextlib.ExitStack() as stack:
        approver_cmd = approver if approver is None or isinstance(approver, str) else \
            stack.enter_context(_serve(approver)).command
        report_file = stack.enter_context(tempfile.TemporaryFile(prefix="txguard-report-"))
        fd = report_file.fileno()
        argv = build_argv(cmd, report_fd=fd, workspace=workspace, txguard=txguard, policy=policy,
                          timeout=timeout, approver=approver_cmd, **options)
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_output else subprocess.PIPE,
                env=None if env is None else dict(env), pass_fds=(fd,),
                cwd=None if cwd is None else os.fspath(cwd))
        except OSError as e:
            raise TxguardError(f"cannot start {argv[0]}: {e.strerror}: install txguard or set $TXGUARD") from e
        try:
            out_b, err_b = proc.communicate(input, timeout=wait_timeout)
        except subprocess.TimeoutExpired:
            # SIGTERM, not SIGKILL: txguard kills the tree, restores the
            # workspace and still writes its report (end_reason "interrupted").
            proc.terminate()
            try:
                out_b, err_b = proc.communicate(timeout=_TERM_WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                out_b, err_b = proc.communicate()
        report_file.seek(0)
        text = report_file.read().decode("utf-8", "replace")
    stdout, stderr = _decode(out_b), _decode(err_b)
    diag = stderr if not merge_output else stdout
    if not text.strip():
        last = (diag or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise TxguardError(f"txguard wrote no report: {last[0]}", returncode=proc.returncode,
                           stderr=diag, policy_errors=_policy_errors(diag))
    result = _result(proc.returncode, json.loads(text), stdout, stderr, merge_output)
    if result.outcome == "setup_failed":
        errors = _policy_errors(diag)
        msg = result.report.get("error") or "txguard could not set up"
        if errors:
            msg += ": " + "; ".join(errors[:5])
        raise TxguardError(msg, returncode=proc.returncode, stderr=diag, policy_errors=errors,
                           result=result)
    if check and not result.ok:
        raise CommandFailed(result.text.splitlines()[-1], returncode=result.returncode,
                            stderr=diag, result=result)
    return result


def _serve(callback: Callable[[Dict[str, Any]], Any]) -> CallbackServer:
    try:
        return CallbackServer(_sync_callback(callback))
    except OSError as e:
        raise TxguardError(f"cannot serve the approver callback: {e}: set $TMPDIR to a short, "
                           "writable directory") from e


def _sync_callback(callback: Callable[[Dict[str, Any]], Any]) -> ApproverCallback:
    """A callback run() can call from its thread; a coroutine it cannot await is a deny."""
    def call(decision: Dict[str, Any]) -> ApproverAnswer:
        answer = callback(decision)
        if inspect.isawaitable(answer):
            if inspect.iscoroutine(answer):
                answer.close()
            raise TypeError("the callback is async: use run_async()")
        return answer
    return call


async def _await(answer: Any) -> Any:
    return await answer


async def run_async(cmd: Command, **kwargs: Any) -> Result:
    """run() for asyncio: the same arguments, run in the default executor.

    An approver callback may be async here: it is awaited on this event loop
    (the call under txguard waits meanwhile); a plain one runs in run()'s thread.
    """
    loop = asyncio.get_running_loop()
    callback = kwargs.get("approver")
    if callable(callback):
        def on_loop(decision: Dict[str, Any]) -> Any:
            answer = callback(decision)
            if inspect.isawaitable(answer):
                return asyncio.run_coroutine_threadsafe(_await(answer), loop).result()
            return answer
        kwargs["approver"] = on_loop
    return await loop.run_in_executor(None, functools.partial(run, cmd, **kwargs))


def _subcommand(args: List[str], *, cwd: Optional[PathArg], workspace: Optional[PathArg],
                state_dir: Optional[PathArg], txguard: Optional[PathArg], ok: Sequence[int] = (0,)) -> Any:
    _check_dir("cwd", cwd)
    _check_dir("workspace", workspace)
    argv = [find_txguard(txguard)]
    if workspace is not None:
        argv += ["--workspace", os.fspath(workspace)]
    if state_dir is not None:
        argv += ["--state-dir", os.fspath(state_dir)]
    p = subprocess.run(argv + args, stdin=subprocess.DEVNULL, capture_output=True,
                       cwd=None if cwd is None else os.fspath(cwd))
    out, err = _decode(p.stdout) or "", _decode(p.stderr) or ""
    if p.returncode not in ok or not out.strip():
        line = (err.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise TxguardError(line.replace("txguard: ", "", 1), returncode=p.returncode, stderr=err)
    data = json.loads(out)
    if isinstance(data, dict):
        data.setdefault("returncode", p.returncode)
    return data


def undo(id: Optional[str] = None, *, force: bool = False, cwd: Optional[PathArg] = None,
         workspace: Optional[PathArg] = None, state_dir: Optional[PathArg] = None,
         txguard: Optional[PathArg] = None) -> Dict[str, Any]:
    """`txguard undo [ID] --json`: undo run ID (default: the newest) and every later one.

    Returns the JSON result; a refusal (paths changed since outside txguard)
    comes back with returncode 1 and the conflicts listed, never raised.
    """
    args = ["undo", "--json"] + (["--force"] if force else []) + ([id] if id else [])
    return _subcommand(args, cwd=cwd, workspace=workspace, state_dir=state_dir, txguard=txguard,
                       ok=(0, 1))


def redo(*, force: bool = False, cwd: Optional[PathArg] = None, workspace: Optional[PathArg] = None,
         state_dir: Optional[PathArg] = None, txguard: Optional[PathArg] = None) -> Dict[str, Any]:
    """`txguard redo --json`: undo the last undo (the runs it undid come back).

    Returns the JSON result ({ok, refused, error, entry, redone, conflicts});
    a refusal (nothing to redo, a newer run, paths changed since) comes back
    with returncode 1, never raised.
    """
    args = ["redo", "--json"] + (["--force"] if force else [])
    return _subcommand(args, cwd=cwd, workspace=workspace, state_dir=state_dir, txguard=txguard,
                       ok=(0, 1))


def log(*, cwd: Optional[PathArg] = None, workspace: Optional[PathArg] = None,
        state_dir: Optional[PathArg] = None, txguard: Optional[PathArg] = None) -> List[Dict[str, Any]]:
    """`txguard log --json`: the workspace's runs, newest first."""
    return _subcommand(["log", "--json"], cwd=cwd, workspace=workspace, state_dir=state_dir,
                       txguard=txguard)


def status(*, cwd: Optional[PathArg] = None, workspace: Optional[PathArg] = None,
           state_dir: Optional[PathArg] = None, txguard: Optional[PathArg] = None) -> Dict[str, Any]:
    """`txguard status --json`: the workspace, open transactions, interrupted runs."""
    return _subcommand(["status", "--json"], cwd=cwd, workspace=workspace, state_dir=state_dir,
                       txguard=txguard)


def explain(cmd: Command, *, cwd: Optional[PathArg] = None, workspace: Optional[PathArg] = None,
            policy: Union[None, PathArg, Sequence[PathArg]] = None, no_default_policy: bool = False,
            txguard: Optional[PathArg] = None) -> Dict[str, Any]:
    """`txguard policy explain --json -- ARGV`: the verdict an exec of cmd would get.

    Exit 0 (allow) and 1 (deny or kill) are both answers, returned with their
    returncode; 2 (a question that cannot be asked) raises TxguardError.
    """
    if isinstance(cmd, str):
        cmd = ["/bin/sh", "-c", cmd]
    args = ["policy", "explain", "--json"]
    for p in _as_list(policy):
        args += ["--policy", p]
    if no_default_policy:
        args.append("--no-default-policy")
    return _subcommand(args + ["--"] + [os.fspath(c) for c in cmd], cwd=cwd, workspace=workspace,
                       state_dir=None, txguard=txguard, ok=(0, 1))
