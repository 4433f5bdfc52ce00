#!/usr/bin/python3
"""Signals that reach txguard: Ctrl-C on a terminal, and kill(2) of txguard alone.

  signals.py ctrlc DRIVER TREE LOG    Ctrl-C typed on a pty: the command gets ONE SIGINT
  signals.py forward DRIVER TREE LOG  SIGINT sent to the driver alone is forwarded once
  signals.py ctrlz DRIVER TREE LOG    job control in an interactive bash: Ctrl-Z, fg, Ctrl-C
Exit 0 when the command saw exactly one SIGINT and the run ended "interrupted".
"""
import os
import pty
import re
import signal
import subprocess
import sys
import time


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def wait_ready(fd_or_pipe, read):
    deadline = time.time() + 10
    buf = b""
    while b"ready" not in buf:
        if time.time() > deadline:
            fail("command never became ready: %r" % buf)
        buf += read()
    return buf


def wait_exit(pid, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            return status
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    fail("driver did not exit")


def check(status, log):
    code = os.waitstatus_to_exitcode(status)
    with open(log) as f:
        result = [l for l in f if l.startswith("result ")]
    if code != 1:
        fail("command should have counted exactly one SIGINT, exit code %d" % code)
    if not result or "end=interrupted" not in result[-1]:
        fail("run should end interrupted: %r" % result)


def ctrlc(driver, tree, log):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(driver, [driver, "--", tree, "count-int", "300"])
    wait_ready(fd, lambda: os.read(fd, 1024))
    os.write(fd, b"\x03")
    status = wait_exit(pid)
    check(status, log)
    # A command that does not catch it dies of it: 128 + SIGINT.
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(driver, [driver, "--", "/bin/sh", "-c", "echo ready; exec sleep 20"])
    wait_ready(fd, lambda: os.read(fd, 1024))
    time.sleep(0.2)  # let sh exec sleep
    os.write(fd, b"\x03")
    code = os.waitstatus_to_exitcode(wait_exit(pid))
    if code != 130:
        fail("Ctrl-C should end the run with 130, got %d" % code)


def forward(driver, tree, log):
    p = subprocess.Popen([driver, "--", tree, "count-int", "300"], stdout=subprocess.PIPE,
                         start_new_session=True)
    wait_ready(p.stdout, lambda: p.stdout.read1(1024))
    os.kill(p.pid, signal.SIGINT)
    p.wait(timeout=10)
    check(p.returncode << 8, log)


def ctrlz(driver, tree, log):
    import select
    pid, fd = pty.fork()
    if pid == 0:
        os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])

    def until(pat, timeout=10):
        buf = b""
        end = time.time() + timeout
        while not re.search(pat, buf) and time.time() < end:
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    buf += os.read(fd, 4096)
                except OSError:
                    break
        if not re.search(pat, buf):
            fail("no %r in %r" % (pat, buf))
        return buf

    os.write(fd, b"PS1='$ '\n")
    os.write(fd, ("%s -- %s count-int 100\n" % (driver, tree)).encode())
    until(b"ready")
    os.write(fd, b"\x1a")
    until(b"Stopped")
    os.write(fd, b"fg\n")
    time.sleep(0.5)
    os.write(fd, b"\x03")
    time.sleep(0.3)
    os.write(fd, b"echo rc=$?\n")
    out = until(rb"rc=\d+\r")
    os.write(fd, b"exit\n")
    wait_exit(pid)
    if b"rc=1\r" not in out:
        fail("after Ctrl-Z, fg, Ctrl-C the command should count one SIGINT: %r" % out)


if __name__ == "__main__":
    mode, driver, tree, log = sys.argv[1:5]
    os.environ["TG_DRIVER_LOG"] = log
    {"ctrlc": ctrlc, "forward": forward, "ctrlz": ctrlz}[mode](driver, tree, log)
