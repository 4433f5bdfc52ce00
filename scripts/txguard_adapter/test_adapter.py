"""Tests of txguard_adapter. Run: python3 -m unittest discover -s scripts/txguard_adapter

The tests that run txguard need $TXGUARD (meson's test environment sets it);
tests/audit/adapter_test.sh runs them from `meson test --suite integration`.
"""
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import txguard_adapter  # noqa: E402
from txguard_adapter import TxguardError, build_argv, run  # noqa: E402

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


class BuildArgv(unittest.TestCase):
    """The command line, no binary needed."""

    def test_options_map_to_flags(self):
        argv = build_argv(["make", "test"], "/w", 7, txguard="/bin/txguard", policy=["a.yaml", "d"],
                          no_default_policy=True, rollback_on=[3, 2], audit_only=True, timeout=1.5,
                          kill_after="3s", max_procs=10, env_allow=["PATH", "HOME"], env_deny="AWS_*",
                          strip_secrets=True, log="/tmp/l", log_level="exec", quiet=True)
        self.assertEqual(argv, [
            "/bin/txguard", "--workspace", "/w", "--report-fd", "7", "--color", "never",
            "--policy", "a.yaml", "--policy", "d", "--no-default-policy", "--rollback-on", "2,3",
            "--audit-only", "--timeout", "1500ms", "--kill-after", "3s", "--max-procs", "10",
            "--log-level", "exec", "--env-allow", "PATH", "--env-allow", "HOME", "--env-deny", "AWS_*",
            "--strip-secrets", "--log", "/tmp/l", "--quiet", "--", "make", "test"])

    def test_string_command_runs_in_sh(self):
        argv = build_argv("echo hi > x", "/w", 3, txguard="t")
        self.assertEqual(argv[-4:], ["--", "/bin/sh", "-c", "echo hi > x"])

    def test_single_policy_path(self):
        argv = build_argv(["true"], "/w", 3, txguard="t", policy="p.yaml")
        self.assertIn("p.yaml", argv)
        self.assertEqual(argv.count("--policy"), 1)

    def test_bad_values(self):
        with self.assertRaises(ValueError):
            build_argv([], "/w", 3, txguard="t")
        with self.assertRaises(ValueError):
            build_argv(["true"], "/w", 3, txguard="t", timeout=0)
        with self.assertRaises(TypeError):
            build_argv(["true"], "/w", 3, txguard="t", timeout=True)

    def test_no_binary(self):
        old = os.environ.pop("TXGUARD", None)
        old_path = os.environ.get("PATH")
        os.environ["PATH"] = "/nonexistent"
        try:
            with self.assertRaises(TxguardError):
                txguard_adapter.find_txguard()
        finally:
            os.environ["PATH"] = old_path
            if old is not None:
                os.environ["TXGUARD"] = old


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

    def tearDown(self):
        self.tmp.cleanup()

    def run_tg(self, cmd, **opts):
        opts.setdefault("no_default_policy", True)
        opts.setdefault("policy", self.policy)
        return run(cmd, self.ws, **opts)

    def path(self, name):
        return os.path.join(self.ws, name)

    def test_commit(self):
        r = self.run_tg(["sh", "-c", "echo hello; echo data > made.txt"])
        self.assertEqual(r["returncode"], 0)
        self.assertEqual(r["outcome"], "committed")
        self.assertEqual(r["end_reason"], "exited")
        self.assertEqual(r["changes"]["created"], ["made.txt"])
        self.assertEqual(r["stdout"], "hello\n")
        self.assertEqual(r["denials"], [])
        with open(self.path("made.txt")) as f:
            self.assertEqual(f.read(), "data\n")

    def test_failure_rolls_back(self):
        with open(self.path("keep.txt"), "w") as f:
            f.write("original\n")
        r = self.run_tg("echo changed > keep.txt; rm -f keep.txt; echo x > new.txt; exit 3")
        self.assertEqual(r["returncode"], 3)
        self.assertEqual(r["exit"]["code"], 3)
        self.assertEqual(r["outcome"], "rolled_back")
        self.assertFalse(os.path.exists(self.path("new.txt")))
        with open(self.path("keep.txt")) as f:
            self.assertEqual(f.read(), "original\n")

    def test_denial_is_reported_and_readable(self):
        tool = self.path("adapter-forbidden")
        with open("/bin/true", "rb") as src, open(tool, "wb") as dst:
            dst.write(src.read())
        os.chmod(tool, 0o755)
        r = self.run_tg(["sh", "-c", "./adapter-forbidden; echo rc=$?"])
        self.assertEqual(r["outcome"], "committed")
        self.assertEqual(r["stdout"], "rc=126\n")
        self.assertEqual([d["rule"] for d in r["decisions"]], ["adapter-test-no-tool"])
        self.assertEqual(r["decisions"][0]["errno"], "EACCES")
        self.assertEqual(len(r["denials"]), 1)
        self.assertIn("by rule adapter-test-no-tool: the adapter test's forbidden program",
                      r["denials"][0])

    def test_timeout(self):
        r = self.run_tg("echo x > slow.txt; sleep 30", timeout=1)
        self.assertEqual(r["end_reason"], "timeout")
        self.assertEqual(r["outcome"], "rolled_back")
        self.assertFalse(os.path.exists(self.path("slow.txt")))
        self.assertLess(r["duration_s"], 20)  # the command sleeps 30 s

    def test_wait_timeout_interrupts_and_rolls_back(self):
        r = self.run_tg("echo x > w.txt; sleep 30", wait_timeout=1)
        self.assertEqual(r["end_reason"], "interrupted")
        self.assertEqual(r["outcome"], "rolled_back")
        self.assertFalse(os.path.exists(self.path("w.txt")))

    def test_rollback_on_codes(self):
        r = self.run_tg("echo x > g.txt; exit 1", rollback_on=[2, 3])
        self.assertEqual(r["returncode"], 1)
        self.assertEqual(r["outcome"], "committed")
        self.assertTrue(os.path.exists(self.path("g.txt")))

    def test_input_and_env(self):
        env = dict(os.environ, ADAPTER_VAR="v1")
        r = self.run_tg(["sh", "-c", "cat; echo $ADAPTER_VAR"], input="from stdin\n", env=env)
        self.assertEqual(r["stdout"], "from stdin\nv1\n")

    def test_setup_failure_still_reports(self):
        r = self.run_tg(["true"], policy=os.path.join(self.tmp.name, "missing.yaml"))
        self.assertEqual(r["returncode"], 125)
        self.assertEqual(r["outcome"], "setup_failed")
        self.assertIsNone(r["end_reason"])

    def test_no_report_raises(self):
        with self.assertRaises(TxguardError) as cm:
            run(["true"], self.ws, txguard="/bin/false")
        self.assertEqual(cm.exception.returncode, 1)


if __name__ == "__main__":
    unittest.main()
