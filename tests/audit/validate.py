#!/usr/bin/python3
"""Validate txguard output against docs/schema/*.schema.json.

  validate.py report FILE...   each FILE holds exactly one report object
  validate.py log FILE...      each FILE is JSON Lines; seq must count 0,1,2...
  validate.py explain FILE...  each FILE holds one `policy explain --json` object
  validate.py selftest         the schemas are valid, their shared $defs agree,
                               and they reject documents that are wrong

Exits 0 when everything validates, 1 with the first error, 77 when the
jsonschema module is missing (tests/lib/common.sh semantics).
"""
import copy
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3 module jsonschema missing (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(77)

SRC = os.environ.get("TXGUARD_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
SCHEMA_DIR = os.path.join(SRC, "docs", "schema")
SHARED_DEFS = ["time", "hex", "hex_array", "op_fields", "verdict_fields", "counts", "exit", "conn_fields"]


def validator(kind):
    with open(os.path.join(SCHEMA_DIR, kind + ".schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check(v, doc, where):
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        sys.exit(f"{where}: {'/'.join(map(str, e.absolute_path))}: {e.message}")


def load_report(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")      # strict: must be UTF-8
    if not text.endswith("\n") or text.count("\n") != 1:
        sys.exit(f"{path}: a report is one object on one line ending in a newline")
    return json.loads(text)


def load_log(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    if text and not text.endswith("\n"):
        sys.exit(f"{path}: last log line is not complete")
    return [json.loads(line) for line in text.split("\n")[:-1]]


def cmd_report(paths):
    v = validator("report")
    for p in paths:
        check(v, load_report(p), p)
    print(f"{len(paths)} report(s) valid")


def cmd_log(paths):
    v = validator("log")
    n = 0
    for p in paths:
        events = load_log(p)
        if not events:
            sys.exit(f"{p}: empty log")
        for i, ev in enumerate(events):
            check(v, ev, f"{p}:{i + 1}")
            if ev["seq"] != i:
                sys.exit(f"{p}:{i + 1}: seq {ev['seq']} != {i}")
        if events[0]["event"] != "log_start":
            sys.exit(f"{p}: first event is {events[0]['event']}, not log_start")
        n += len(events)
    print(f"{n} log line(s) in {len(paths)} file(s) valid")


def must_fail(v, doc, what):
    if v.is_valid(doc):
        sys.exit(f"schema accepted a bad document: {what}")


def cmd_selftest():
    rv, lv = validator("report"), validator("log")
    for name in SHARED_DEFS:
        if rv.schema["$defs"][name] != lv.schema["$defs"][name]:
            sys.exit(f"$defs/{name} differs between report and log schema")
    good = {
        "report_version": 1, "txguard_version": "0.1.0", "command": ["true"], "workspace": "/w",
        "transaction_id": "t", "start": "2026-11-30T16:00:00.000Z", "end": "2026-11-30T16:00:01.000Z",
        "duration_ms": 1000, "duration_s": 1.0, "outcome": "committed", "end_reason": "exited",
        "exit": {"status": 0, "code": 0, "signal": None, "signal_name": None}, "error": None,
        "kill_reason": None, "audit_only": False, "rollback_on": "failure", "policy_files": [],
        "processes": 1, "traps": 0, "decisions": [], "decisions_dropped": 0,
        "decision_counts": {"denied": 0, "killed": 0, "audited": 0}, "unobserved": [], "changes": None,
        "journal_bytes": 0,
    }
    check(rv, good, "selftest good report")
    bad = copy.deepcopy(good); bad["outcome"] = "maybe"
    must_fail(rv, bad, "unknown outcome")
    bad = copy.deepcopy(good); del bad["exit"]
    must_fail(rv, bad, "missing exit")
    bad = copy.deepcopy(good); bad["surprise"] = 1
    must_fail(rv, bad, "unknown top-level field")
    bad = copy.deepcopy(good); bad["start"] = "yesterday"
    must_fail(rv, bad, "bad time")
    bad = copy.deepcopy(good)
    bad["decisions"] = [{"time": "2026-11-30T16:00:00.000Z", "pid": 1, "syscall": "execve", "op": "exec",
                         "action": "deny", "enforced": True, "errno": "EPERM", "rule": "r",
                         "reason": None, "source": None, "count": 1, "bogus": 1}]
    must_fail(rv, bad, "unknown field in a decision")
    del bad["decisions"][0]["bogus"]
    check(rv, bad, "selftest decision")
    ev = {"event": "process_start", "seq": 0, "time": "2026-11-30T16:00:00.000Z", "pid": 2, "ppid": 1,
          "thread": False}
    check(lv, ev, "selftest process_start")
    must_fail(lv, dict(ev, event="nope"), "unknown event")
    must_fail(lv, dict(ev, extra=1), "unknown field in an event")
    must_fail(lv, {k: v for k, v in ev.items() if k != "ppid"}, "missing ppid")
    print("schemas valid, shared $defs agree, bad documents rejected")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    if argv[1] == "report":
        cmd_report(argv[2:])
    elif argv[1] == "log":
        cmd_log(argv[2:])
    elif argv[1] == "explain":
        v = validator("explain")
        for p in argv[2:]:
            check(v, load_report(p), p)
        print(f"{len(argv) - 2} answer(s) valid")
    elif argv[1] == "selftest":
        cmd_selftest()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
