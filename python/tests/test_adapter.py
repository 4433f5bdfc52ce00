"""Tests of txguard_adapter. Run: python3 -m unittest discover -s python/tests

The tests that run txguard need $TXGUARD (meson's test environment sets it);
tests/audit/adapter_test.sh runs them from `meson test --suite integration`.
"""
import asyncio
import json
import os
import sys
import tempfile
import textwrap
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import txguard_adapter  # noqa: E402
from txguard_adapter import CommandFailed, TxguardError, build_argv, run  # noqa: E402

POLICY = textwrap.dedent("""\
    version: 1
    rules:
      - id: adapter-test-no-tool
        reason: the adapter test's forbidden program; use true instead
        action: deny
        errno: EACCES
        exec:
          program: [adapter-forbidden]
        examples:
          match: ["adapter-forbidden"]
          not_match: ["true"]
    """)

ASK_POLICY = textwrap.dedent("""\
    version: 1
    rules:
      - id: adapter-test-ask
        reason: touch needs a yes
        action: ask
        errno: EACCES
        exec: {program: [touch]}
        examples:
          match: [touch x]
          not_match: [ls]
    """)


class ApproverAnswers(unittest.TestCase):
    """What a callback's result becomes on the answer line, no binary needed."""

    def parse(self, result):
        from txguard_adapter._callback import answer_line
        line = answer_line(result)
        self.assertTrue(line.endswith("\n") and "\n" not in line[:-1], line)
        return json.loads(line)

    def test_words_and_dicts(self):
        self.assertEqual(self.parse("allow"), {"decision": "allow"})
        self.assertEqual(self.parse("deny"), {"decision": "deny"})
        self.assertEqual(self.parse({"decision": "allow", "remember": True, "reason": 'a "b" \\ c\nd'}),
                         {"decision": "allow", "remember": True, "reason": 'a "b" \\ c d'})

    def test_anything_else_is_a_deny_with_a_reason(self):
        for bad in ("yes", True, None, 1, {"decision": "maybe"}, {"decision": "allow", "remember": "yes"},
                    {"decision": "allow", "extra": 1}):
            a = self.parse(bad)
            self.assertEqual(a["decision"], "deny", bad)
            self.assertIn("approver callback", a["reason"], bad)
            self.assertNotIn("remember", a, bad)

    def test_string_and_callable_approvers_in_argv(self):
        argv = build_argv(["true"], report_fd=3, txguard="t", approver="ok", approver_timeout="2m")
        self.assertEqual(argv[argv.index("--approver") + 1], "ok")
        self.assertEqual(argv[argv.index("--approver-timeout") + 1], "2m")


class BuildArgv(unittest.TestCase):
    """The command line, no binary needed."""

    def test_options_map_to_flags(self):
        argv = build_argv(["make", "test"], report_fd=7, workspace="/w", txguard="/bin/txguard",
                          policy=["a.yaml", "d"], no_default_policy=True, rollback_on=[3, 2],
                          audit_only=True, timeout=1.5, kill_after="3s", max_procs=10,
                          env_allow=["PATH", "HOME"], env_deny="AWS_*", strip_secrets=True,
                          log="/tmp/l", log_level="exec", quiet=True, approver="/bin/ok")
        self.assertEqual(argv, [
            "/bin/txguard", "--report-fd", "7", "--color", "never", "--workspace", "/w",
            "--policy", "a.yaml", "--policy", "d", "--no-default-policy", "--timeout", "1500ms",
            "--kill-after", "3s", "--approver", "/bin/ok", "--rollback-on", "2,3", "--audit-only",
            "--strip-secrets", "--env-allow", "PATH", "--env-allow", "HOME", "--env-deny", "AWS_*",
            "--max-procs", "10", "--log-level", "exec", "--log", "/tmp/l", "--quiet",
            "--", "make", "test"])

    def test_no_workspace_lets_txguard_choose(self):
        argv = build_argv(["true"], report_fd=3, txguard="t")
        self.assertNotIn("--workspace", argv)

    def test_string_command_runs_in_sh(self):
        argv = build_argv("echo hi > x", report_fd=3, txguard="t")
        self.assertEqual(argv[-4:], ["--", "/bin/sh", "-c", "echo hi > x"])

    def test_bad_values(self):
        with self.assertRaises(ValueError):
            build_argv([], report_fd=3, txguard="t")
        with self.assertRaises(ValueError):
            build_argv(["true"], report_fd=3, txguard="t", timeout=0)
        with self.assertRaises(TypeError):
            build_argv(["true"], report_fd=3, txguard="t", timeout=True)

    def test_no_binary(self):
        old = os.environ.pop("TXGUARD", None)
        old_path = os.environ.get("PATH", "")
        os.environ["PATH"] = "/nonexistent"
        try:
            with self.assertRaises(TxguardError):
                txguard_adapter.find_txguard()
        finally:
            os.environ["PATH"] = old_path
            if old is not None:
                os.environ["TXGUARD"] = old

    def test_missing_workspace_is_a_txguard_error(self):
        with self.assertRaises(TxguardError) as cm:
            run(["true"], workspace="/nonexistent/ws", txguard="t")
        self.assertIn("does not exist", str(cm.exception))
        self.assertNotIsInstance(cm.exception, FileNotFoundError)


@unittest.skipUnless(os.environ.get("TXGUARD"), "needs $TXGUARD (run through meson test)")
class Run(unittest.TestCase):
    """Real runs of the binary."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="txguard-adapter-")
        self.ws = os.path.join(self.tmp.name, "ws")
        os.mkdir(self.ws)
        self.policy = os.path.join(self.tmp.name, "policy.yaml")
        with open(self.policy, "w") as f:
            f.write(POLICY)
        os.environ["TXGUARD_STATE_DIR"] = os.path.join(self.tmp.name, "state")

    def tearDown(self):
        os.environ.pop("TXGUARD_STATE_DIR", None)
        self.tmp.cleanup()

    def run_tg(self, cmd, **opts):
        opts.setdefault("no_default_policy", True)
        opts.setdefault("policy", self.policy)
        opts.setdefault("cwd", self.ws)
        return run(cmd, **opts)

    def path(self, name):
        return os.path.join(self.ws, name)

    def test_commit(self):
        r = self.run_tg(["sh", "-c", "echo hello; echo data > made.txt"])
        self.assertTrue(r.ok)
        self.assertEqual((r.returncode, r.outcome, r.end_reason), (0, "committed", "exited"))
        self.assertEqual(r.changed["created"], ["made.txt"])
        self.assertEqual(r.changed_paths, ["made.txt"])
        self.assertEqual(r.stdout, "hello\n")
        self.assertEqual(r.denials, [])
        self.assertEqual(r.workspace, os.path.realpath(self.ws))
        self.assertEqual(r.workspace_source, "cwd")
        self.assertEqual(r["outcome"], "committed")  # the report, as a dict
        self.assertIn("[exit 0; 1 path(s) changed and kept]", r.text)

    def test_cwd_inside_a_git_project_journals_the_project(self):
        os.mkdir(self.path(".git"))
        os.mkdir(self.path("src"))
        with open(self.path("README"), "w") as f:
            f.write("v1\n")
        r = self.run_tg("echo v2 > ../README; exit 5", cwd=self.path("src"))
        self.assertEqual((r.returncode, r.outcome, r.workspace_source), (5, "rolled_back", "git"))
        with open(self.path("README")) as f:
            self.assertEqual(f.read(), "v1\n")
        self.assertIn("all 1 change(s) were undone", r.text)

    def test_failure_rolls_back_and_check_raises(self):
        with open(self.path("keep.txt"), "w") as f:
            f.write("original\n")
        with self.assertRaises(CommandFailed) as cm:
            self.run_tg("echo changed > keep.txt; echo x > new.txt; exit 3", check=True)
        r = cm.exception.result
        self.assertEqual((r.returncode, r.outcome), (3, "rolled_back"))
        self.assertFalse(os.path.exists(self.path("new.txt")))
        with open(self.path("keep.txt")) as f:
            self.assertEqual(f.read(), "original\n")

    def test_denials_are_deduplicated_and_say_what_to_do(self):
        tool = self.path("adapter-forbidden")
        with open("/bin/true", "rb") as src, open(tool, "wb") as dst:
            dst.write(src.read())
        os.chmod(tool, 0o755)
        r = self.run_tg(["sh", "-c", "./adapter-forbidden; ./adapter-forbidden; echo rc=$?"])
        self.assertEqual(r.outcome, "committed")
        self.assertEqual(r.stdout, "rc=126\n")
        self.assertEqual(len(r.denials), 1)
        d = r.denials[0]
        self.assertEqual((d.rule, d.action, d.count), ("adapter-test-no-tool", "deny", 2))
        self.assertEqual(d.reason, "the adapter test's forbidden program; use true instead")
        self.assertIn(".txguard.yaml", d.instead)
        self.assertIn("denied by rule adapter-test-no-tool", r.text)

    def test_merged_output_keeps_order(self):
        r = self.run_tg("echo one; echo two >&2; echo three", merge_output=True)
        self.assertEqual(r.output, "one\ntwo\nthree\n")

    def test_timeout(self):
        r = self.run_tg("echo x > slow.txt; sleep 30", timeout=1)
        self.assertEqual((r.end_reason, r.outcome), ("timeout", "rolled_back"))
        self.assertFalse(os.path.exists(self.path("slow.txt")))

    def test_wait_timeout_interrupts_and_rolls_back(self):
        r = self.run_tg("echo x > w.txt; sleep 30", timeout=None, wait_timeout=1)
        self.assertEqual((r.end_reason, r.outcome), ("interrupted", "rolled_back"))
        self.assertFalse(os.path.exists(self.path("w.txt")))

    def test_input_and_env(self):
        env = dict(os.environ, ADAPTER_VAR="v1")
        r = self.run_tg(["sh", "-c", "cat; echo $ADAPTER_VAR"], input="from stdin\n", env=env)
        self.assertEqual(r.stdout, "from stdin\nv1\n")

    def test_policy_errors_are_listed(self):
        bad = os.path.join(self.tmp.name, "bad.yaml")
        with open(bad, "w") as f:
            f.write("version: 1\nrules:\n  - id: x\n    action: maybe\n")
        with self.assertRaises(TxguardError) as cm:
            self.run_tg(["true"], policy=bad)
        e = cm.exception
        self.assertEqual(e.returncode, 125)
        self.assertTrue(e.policy_errors, e.stderr)
        self.assertTrue(all(err.startswith(bad + ":") for err in e.policy_errors), e.policy_errors)
        self.assertEqual(e.result.outcome, "setup_failed")

    def test_no_report_raises(self):
        with self.assertRaises(TxguardError) as cm:
            run(["true"], cwd=self.ws, txguard="/bin/false")
        self.assertEqual(cm.exception.returncode, 1)

    def test_async(self):
        r = asyncio.run(txguard_adapter.run_async("echo a > a.txt", cwd=self.ws,
                                                  no_default_policy=True, policy=self.policy))
        self.assertTrue(r.ok)

    def test_log_undo_explain_status(self):
        self.run_tg("echo 1 > one.txt")
        self.run_tg("echo 2 > two.txt")
        runs = txguard_adapter.log(cwd=self.ws)
        self.assertEqual(len(runs), 2)
        suffix = runs[1]["id"].rsplit("-", 1)[1]
        u = txguard_adapter.undo(suffix, cwd=self.ws)
        self.assertEqual((u["returncode"], u["undone"]), (0, [runs[0]["id"], runs[1]["id"]]))
        self.assertFalse(os.path.exists(self.path("one.txt")))
        v = txguard_adapter.explain(["adapter-forbidden"], cwd=self.ws, no_default_policy=True,
                                    policy=self.policy)
        self.assertEqual((v["verdict"], v["rule"]), ("deny", "adapter-test-no-tool"))
        s = txguard_adapter.status(cwd=self.ws)
        self.assertEqual((s["transactions"], s["runs"]), ([], []))

    def test_approver_is_passed_through(self):
        # Only where this txguard has --approver (issue 13); else the flag is
        # a usage error and the adapter says so without a report.
        import subprocess
        helptext = subprocess.run([os.environ["TXGUARD"], "--help"], capture_output=True, text=True).stdout
        if "--approver" not in helptext:
            with self.assertRaises(TxguardError) as cm:
                self.run_tg(["true"], approver="/bin/true")
            self.assertEqual(cm.exception.returncode, 2)
            return
        r = self.run_tg(["true"], approver="/bin/true")
        self.assertTrue(r.ok)


@unittest.skipUnless(os.environ.get("TXGUARD"), "needs $TXGUARD (run through meson test)")
class ApproverCallback(unittest.TestCase):
    """run(approver=callable): `action: ask` answered by Python, served for the run."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="txguard-adapter-")
        self.ws = os.path.join(self.tmp.name, "ws")
        os.mkdir(self.ws)
        self.policy = os.path.join(self.tmp.name, "ask.yaml")
        with open(self.policy, "w") as f:
            f.write(ASK_POLICY)
        os.environ["TXGUARD_STATE_DIR"] = os.path.join(self.tmp.name, "state")
        # The server's private directory goes here: the test sees it cleaned up.
        self.tempdir = os.path.join(self.tmp.name, "t")
        os.mkdir(self.tempdir)
        self.old_tempdir, tempfile.tempdir = tempfile.tempdir, self.tempdir
        self.questions = []

    def tearDown(self):
        tempfile.tempdir = self.old_tempdir
        os.environ.pop("TXGUARD_STATE_DIR", None)
        self.tmp.cleanup()

    def run_tg(self, approver, **opts):
        r = run(["sh", "-c", "touch a; touch b"], cwd=self.ws, no_default_policy=True,
                policy=self.policy, approver=approver, approver_timeout="20s", **opts)
        self.assertEqual(os.listdir(self.tempdir), [], "the approver's socket directory is left")
        self.assertNotIn("txguard-approver", [t.name for t in threading.enumerate()])
        return r

    def asks(self, answer):
        def callback(decision):
            self.questions.append(decision)
            if isinstance(answer, BaseException):
                raise answer
            return answer
        return callback

    def decisions(self, r):
        return [(d["action"], d.get("decided_by"), d["rule"]) for d in r.report["decisions"]]

    def test_allow(self):
        r = self.run_tg(self.asks("allow"))
        self.assertEqual((r.returncode, r.outcome), (0, "committed"), r.text)
        self.assertTrue(os.path.exists(os.path.join(self.ws, "a")))
        self.assertTrue(os.path.exists(os.path.join(self.ws, "b")))
        self.assertEqual(self.decisions(r), [("allow", "approver", "adapter-test-ask")] * 2)
        self.assertEqual(len(self.questions), 2)
        q = self.questions[0]
        self.assertEqual((q["rule"], q["op"], q["argv"]), ("adapter-test-ask", "exec", ["touch", "a"]))
        self.assertEqual(q["workspace"], os.path.realpath(self.ws))

    def test_remember_and_reason(self):
        r = self.run_tg(self.asks({"decision": "allow", "remember": True, "reason": "ok by the test"}))
        self.assertEqual((r.returncode, r.outcome), (0, "committed"), r.text)
        self.assertEqual(len(self.questions), 1)
        self.assertEqual(r.report["decisions"][0]["reason"], "ok by the test")

    def test_deny(self):
        r = self.run_tg(self.asks({"decision": "deny", "reason": "not today"}))
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "a")))
        self.assertEqual(self.decisions(r), [("deny", "approver", "adapter-test-ask")] * 2)
        self.assertEqual(r.denials[0].reason, "not today")

    def test_a_callback_that_raises_denies(self):
        r = self.run_tg(self.asks(RuntimeError("boom")))
        self.assertNotEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "a")))
        self.assertEqual(self.decisions(r)[0][0], "deny")
        self.assertIn("raised RuntimeError: boom", r.report["decisions"][0]["reason"])

    def test_a_wrong_answer_denies(self):
        r = self.run_tg(self.asks(True))
        self.assertFalse(os.path.exists(os.path.join(self.ws, "a")))
        self.assertEqual(self.decisions(r)[0][0], "deny")
        self.assertIn("returned a bool", r.report["decisions"][0]["reason"])

    def test_async_callback_on_the_event_loop(self):
        async def callback(decision):
            self.questions.append((decision["argv"], threading.current_thread() is threading.main_thread()))
            await asyncio.sleep(0)
            return "allow"

        async def main():
            return await txguard_adapter.run_async(
                ["sh", "-c", "touch a; touch b"], cwd=self.ws, no_default_policy=True,
                policy=self.policy, approver=callback)
        r = asyncio.run(main())
        self.assertEqual((r.returncode, r.outcome), (0, "committed"), r.text)
        self.assertEqual(self.questions, [(["touch", "a"], True), (["touch", "b"], True)])
        self.assertEqual(os.listdir(self.tempdir), [])

    def test_an_async_callback_in_run_denies(self):
        async def callback(decision):
            return "allow"
        r = self.run_tg(callback)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "a")))
        self.assertIn("use run_async()", r.report["decisions"][0]["reason"])


if __name__ == "__main__":
    unittest.main()
