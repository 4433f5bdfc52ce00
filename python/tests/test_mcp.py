"""A scripted MCP client session against `python -m txguard_adapter.mcp`:
initialize, tools/list, tools/call of every tool, errors. Needs $TXGUARD."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from test_adapter import POLICY  # noqa: E402


@unittest.skipUnless(os.environ.get("TXGUARD"), "needs $TXGUARD (run through meson test)")
class Session(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="txguard-mcp-")
        self.ws = os.path.join(self.tmp.name, "repo")
        os.makedirs(os.path.join(self.ws, ".git"))
        os.makedirs(os.path.join(self.ws, "src"))
        self.policy = os.path.join(self.tmp.name, "policy.yaml")
        with open(self.policy, "w") as f:
            f.write(POLICY)
        env = dict(os.environ, PYTHONPATH=PKG_ROOT, TXGUARD_STATE_DIR=os.path.join(self.tmp.name, "st"),
                   TXGUARD_DEFAULT_POLICY_DIR=os.path.join(self.tmp.name, "no-default"))
        os.mkdir(env["TXGUARD_DEFAULT_POLICY_DIR"])
        self.proc = subprocess.Popen(
            [sys.executable, "-B", "-m", "txguard_adapter.mcp", "--policy", self.policy],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=os.path.join(self.ws, "src"),
            env=env, text=True)
        self.next_id = 0

    def tearDown(self):
        self.proc.stdin.close()
        self.assertEqual(self.proc.wait(timeout=30), 0)
        self.proc.stdout.close()
        self.tmp.cleanup()

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params=None):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        reply = json.loads(self.proc.stdout.readline())
        self.assertEqual((reply["jsonrpc"], reply["id"]), ("2.0", self.next_id))
        return reply

    def call(self, name, **arguments):
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        self.assertIn("result", reply, reply)
        return reply["result"]

    def test_session(self):
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "test", "version": "1"}})["result"]
        self.assertEqual(init["protocolVersion"], "2025-06-18")
        self.assertIn("tools", init["capabilities"])
        self.assertEqual(init["serverInfo"]["name"], "txguard")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no reply

        tools = self.request("tools/list")["result"]["tools"]
        self.assertEqual(sorted(t["name"] for t in tools), ["explain", "log", "run_command", "undo"])
        for t in tools:
            self.assertEqual(t["inputSchema"]["type"], "object")

        # A command run from src/ changes the project's top: committed.
        r = self.call("run_command", command="echo hi; echo v1 > ../notes.txt")
        self.assertFalse(r["isError"])
        self.assertEqual(r["structuredContent"]["outcome"], "committed")
        self.assertEqual(r["structuredContent"]["workspace"], os.path.realpath(self.ws))
        self.assertEqual(r["structuredContent"]["changed"], ["notes.txt"])
        self.assertIn("hi", r["content"][0]["text"])

        # A failing one is rolled back, and the text says so.
        r = self.call("run_command", command="echo v2 > ../notes.txt; exit 4")
        self.assertTrue(r["isError"])
        self.assertEqual((r["structuredContent"]["exit_code"], r["structuredContent"]["outcome"]),
                         (4, "rolled_back"))
        self.assertIn("undone", r["content"][0]["text"])
        with open(os.path.join(self.ws, "notes.txt")) as f:
            self.assertEqual(f.read(), "v1\n")

        # A denied exec: the rule, the reason, what to do instead.
        tool = os.path.join(self.ws, "src", "adapter-forbidden")
        with open("/bin/true", "rb") as src, open(tool, "wb") as dst:
            dst.write(src.read())
        os.chmod(tool, 0o755)
        r = self.call("run_command", command=["sh", "-c", "./adapter-forbidden; exit 0"])
        d = r["structuredContent"]["denials"]
        self.assertEqual([x["rule"] for x in d], ["adapter-test-no-tool"])
        self.assertTrue(d[0]["instead"])

        v = self.call("explain", command=["adapter-forbidden", "-x"])
        self.assertEqual(v["structuredContent"]["verdict"], "deny")
        self.assertIn("adapter-test-no-tool", v["content"][0]["text"])

        lg = self.call("log")
        self.assertFalse(lg["isError"])
        # Committed runs only, and a run that changed nothing (the denied
        # exec) leaves no entry: the first run is the one to undo.
        runs = lg["structuredContent"]["runs"]
        self.assertEqual([(x["outcome"], x["counts"]["created"]) for x in runs], [("committed", 1)])

        u = self.call("undo")
        self.assertFalse(u["isError"], u)
        self.assertFalse(os.path.exists(os.path.join(self.ws, "notes.txt")))

        # Errors: a bad tool call is content with isError; unknown things are JSON-RPC errors.
        bad = self.call("run_command", command="true", cwd="/nonexistent")
        self.assertTrue(bad["isError"])
        self.assertIn("does not exist", bad["content"][0]["text"])
        self.assertEqual(self.request("tools/call", {"name": "nosuch"})["error"]["code"], -32602)
        self.assertEqual(self.request("nosuch/method")["error"]["code"], -32601)
        self.assertEqual(self.request("ping")["result"], {})


if __name__ == "__main__":
    unittest.main()
