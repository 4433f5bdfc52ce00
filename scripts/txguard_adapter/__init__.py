"""txguard_adapter: run a command under txguard and get its report as a dict.

For the tool-call adapters of agent frameworks. Standard library only.

    from txguard_adapter import run
    report = run(["make", "test"], "/path/to/repo", timeout=600)
    if report["outcome"] != "committed":
        ...  # the workspace was restored; report["decisions"] says what was denied

The dict is txguard's JSON report (docs/schema/report.schema.json, see
txguard(1) "JSON OUTPUT") with four keys added by this module:

    "returncode"  txguard's exit status (the command's own code, 128+N for
                  signal N, 125 when txguard failed, 126/127 exec errors)
    "stdout", "stderr"  the command's output as text (undecodable bytes
                  replaced), or None with capture_output=False; txguard's own
                  lines ("txguard: denied exec `rm -rf /` by rule ...: why")
                  are in stderr
    "denials"     those denial lines, one string each, for an agent to read

Whether the workspace was restored is report["outcome"]: "committed",
"rolled_back", "restore_failed" or "setup_failed" -- never guess it from
returncode. A report comes back even when txguard could not set up (outcome
"setup_failed", report["error"]); TxguardError is raised only when no report
came at all (txguard missing or crashed).
"""

import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["run", "build_argv", "find_txguard", "TxguardError"]

# How long txguard may take to roll back after our SIGTERM (wait_timeout).
_TERM_WAIT = 60

_DENIAL_PREFIXES = ("txguard: denied ", "txguard: killed the tree at ", "txguard: would deny ",
                    "txguard: would kill the tree at ")


class TxguardError(RuntimeError):
    """txguard produced no report. .returncode and .stderr say what happened."""

    def __init__(self, message, returncode=None, stderr=None):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def find_txguard(txguard=None):
    """The txguard binary: the argument, else $TXGUARD, else txguard on PATH."""
    path = txguard or os.environ.get("TXGUARD") or shutil.which("txguard")
    if not path:
        raise TxguardError("txguard not found: pass txguard=PATH, set $TXGUARD, or install it on PATH")
    return path


def _duration(value):
    """Seconds (int/float) or a txguard duration string ("500ms", "2m")."""
    if isinstance(value, bool):
        raise TypeError("a duration is seconds or a string like '30s'")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ValueError("a duration must be positive")
        return f"{int(round(value * 1000))}ms"
    return str(value)


def _seconds(value):
    """Best-effort seconds of a duration, for our own safety timeout."""
    if isinstance(value, (int, float)):
        return float(value)
    units = (("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600))
    for suffix, scale in units:
        if value.endswith(suffix):
            try:
                return float(value[: -len(suffix)]) * scale
            except ValueError:
                return None
    try:
        return float(value)
    except ValueError:
        return None


def build_argv(cmd, workspace, report_fd, *, txguard=None, policy=(), no_default_policy=False,
               state_dir=None, rollback_on=None, audit_only=False, timeout=None, kill_after=None,
               grace=None, max_procs=None, memory_limit=None, max_file_size=None, env_allow=(),
               env_deny=(), strip_secrets=False, log=None, log_level=None, lock=None, tx=None,
               tx_failure=None, quiet=False, extra_args=()):
    """The txguard command line for run(); exposed for tests and logging.

    cmd is a list of strings (run as is) or one string (run with /bin/sh -c).
    """
    if isinstance(cmd, str):
        cmd = ["/bin/sh", "-c", cmd]
    cmd = [os.fspath(c) for c in cmd]
    if not cmd:
        raise ValueError("empty command")
    argv = [find_txguard(txguard), "--workspace", os.fspath(workspace), "--report-fd", str(report_fd),
            "--color", "never"]
    if isinstance(policy, (str, os.PathLike)):
        policy = [policy]
    for p in policy:
        argv += ["--policy", os.fspath(p)]
    if no_default_policy:
        argv.append("--no-default-policy")
    if state_dir is not None:
        argv += ["--state-dir", os.fspath(state_dir)]
    if rollback_on is not None:
        if isinstance(rollback_on, (list, tuple, set)):
            rollback_on = ",".join(str(int(c)) for c in sorted(rollback_on))
        argv += ["--rollback-on", str(rollback_on)]
    if audit_only:
        argv.append("--audit-only")
    for flag, value in (("--timeout", timeout), ("--kill-after", kill_after), ("--grace", grace)):
        if value is not None:
            argv += [flag, _duration(value)]
    for flag, value in (("--max-procs", max_procs), ("--memory-limit", memory_limit),
                        ("--max-file-size", max_file_size), ("--log-level", log_level),
                        ("--lock", lock), ("--tx", tx), ("--tx-failure", tx_failure)):
        if value is not None:
            argv += [flag, str(value)]
    for pattern in ([env_allow] if isinstance(env_allow, str) else env_allow):
        argv += ["--env-allow", pattern]
    for pattern in ([env_deny] if isinstance(env_deny, str) else env_deny):
        argv += ["--env-deny", pattern]
    if strip_secrets:
        argv.append("--strip-secrets")
    if log is not None:
        argv += ["--log", os.fspath(log)]
    if quiet:
        argv.append("--quiet")
    argv += list(extra_args)
    argv.append("--")
    argv += cmd
    return argv


def _decode(data):
    return None if data is None else data.decode("utf-8", "replace")


def run(cmd, workspace, *, env=None, input=None, capture_output=True, wait_timeout=None, **opts):
    """Run cmd under txguard in workspace; return the report dict (see above).

    The command starts with the workspace as its current directory, so its
    relative paths mean the workspace's files.

    Options (all optional) map to txguard's RUN OPTIONS: txguard (binary path),
    policy (path or list), no_default_policy, state_dir, rollback_on ("failure",
    "signal", "never", "always" or a list of exit codes), audit_only, timeout,
    kill_after, grace (seconds or "30s"), max_procs, memory_limit,
    max_file_size ("2G"), env_allow, env_deny (pattern or list), strip_secrets,
    log (file for JSON Lines events), log_level, lock, tx, tx_failure, quiet,
    extra_args (list appended before "--").

    env is the environment txguard (and so the command) gets; input is bytes or
    str fed to stdin (else stdin is /dev/null: txguard is headless);
    wait_timeout bounds how long this call waits for txguard, in seconds
    (default: timeout + 60 s when a timeout is given, else no bound); past it
    txguard gets SIGTERM, kills the tree, restores the workspace and reports
    end_reason "interrupted" (TxguardError if it is then still silent).
    """
    if isinstance(input, str):
        input = input.encode()
    with tempfile.TemporaryFile(prefix="txguard-report-") as report:
        fd = report.fileno()
        argv = build_argv(cmd, workspace, fd, **opts)
        if wait_timeout is None and opts.get("timeout") is not None:
            secs = _seconds(opts["timeout"])
            if secs is not None:
                wait_timeout = secs + 60
        out = subprocess.PIPE if capture_output else None
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                stdout=out, stderr=out, env=env, pass_fds=(fd,),
                                cwd=os.fspath(workspace))
        try:
            stdout, stderr_b = proc.communicate(input, timeout=wait_timeout)
        except subprocess.TimeoutExpired:
            # SIGTERM, not SIGKILL: txguard then kills the tree, restores the
            # workspace and still writes its report (end_reason "interrupted").
            proc.terminate()
            try:
                stdout, stderr_b = proc.communicate(timeout=_TERM_WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr_b = proc.communicate()
        report.seek(0)
        text = report.read().decode("utf-8")
    stderr = _decode(stderr_b)
    if not text.strip():
        raise TxguardError(f"txguard wrote no report (exit {proc.returncode})"
                           + (f": {stderr.strip()[-2000:]}" if stderr else ""),
                           returncode=proc.returncode, stderr=stderr)
    result = json.loads(text)
    result["returncode"] = proc.returncode
    result["stdout"] = _decode(stdout)
    result["stderr"] = stderr
    result["denials"] = [line for line in (stderr or "").splitlines() if line.startswith(_DENIAL_PREFIXES)]
    return result
