#!/bin/sh
# toolchains_test.sh — real toolchain runs under the default policy refuse
# nothing (issue 13, "no needless refusals"): each run exits as it does
# natively and its report holds no denial. Every toolchain this machine has
# is run (CI's Debian has cc, make, git, pip; a developer's may have more);
# the ones it lacks are named, not failed. They run with the user's own
# HOME and environment, where the toolchains keep their state (pyenv's
# shims, rustup's toolchains, ~/.m2): that state is what the policy must
# allow.
. "$(dirname "$0")/../lib/common.sh"
# Not under /tmp: the default policy makes /tmp writable.
tg_tmpdir_outside
WS="$TG_TMP/ws"
mkdir -p "$WS"
export TXGUARD_STATE_DIR="$TG_TMP/state"
PY=$(command -v python3) || skip "needs python3"
(cd "$WS" && "$TXGUARD" -q -w "$WS" -- true) 2>"$TG_TMP/probe.err" || tg_cannot_run "$TG_TMP/probe.err"

# denials REPORT: the refusals (deny and kill) it holds, "rule path" each
denials() {
	"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
for d in r["decisions"]:
    if d["action"] in ("deny", "kill"):
        print(d["rule"], d.get("path") or d.get("argv", [""])[0])' "$1"
}
ran="" missing=""
# run NAME CMD...: CMD in the workspace, must exit 0 with no denial
run() {
	name=$1; shift
	rc=0
	(cd "$WS" && "$TXGUARD" -q --report "$TG_TMP/$name.json" -w "$WS" -- "$@") \
		>"$TG_TMP/$name.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "$name: exit $rc: $(tail -5 "$TG_TMP/$name.out")"
	assert_eq "$name: denials" "" "$(denials "$TG_TMP/$name.json")"
	ran="$ran $name"
}
have() { command -v "$1" >/dev/null 2>&1 || { missing="$missing $1"; return 1; }; }

# C: a compiler and make, in the workspace.
if have make && have cc; then
	printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$WS/hi.c"
	printf 'hi: hi.c\n\tcc -O2 -o hi hi.c\n' >"$WS/Makefile"
	run make make -s
fi

# git: a repository, a commit, status, log, diff.
if have git; then
	mkdir -p "$WS/repo"
	run git sh -c 'cd repo && git init -q . && echo a > a && git add a &&
		git -c user.email=t@example.org -c user.name=t commit -qm one &&
		echo b >> a && git status --short && git diff --stat && git log --oneline'
fi

# Python: an offline pip install (pip's cache in ~/.cache), and python3 itself.
if "$PY" -m pip --version >/dev/null 2>&1; then
	mkdir -p "$TG_TMP/wheels"
	tg_make_wheel "$TG_TMP/wheels/tcdemo-1.0-py3-none-any.whl" tcdemo 7
	run pip "$PY" -m pip install -q --no-index --disable-pip-version-check \
		--find-links "$TG_TMP/wheels" --target "$WS/site" tcdemo
	[ -e "$WS/site/tcdemo/__init__.py" ] || fail "pip did not install"
else
	missing="$missing pip"
fi
run python "$PY" -c 'import sqlite3, json, tempfile; tempfile.TemporaryFile().close(); print(1)'

# The rest where this machine has them.
if have cargo; then
	run cargo sh -c 'cargo new -q --vcs none c && cd c && cargo build -q --offline && ./target/debug/c'
fi
if have npm; then
	mkdir -p "$WS/n"
	run npm sh -c 'cd n && npm init -y >/dev/null && npm pack --silent >/dev/null && ls *.tgz'
fi
if have node; then
	run node node -e 'require("fs").writeFileSync("n.txt", "x")'
fi
if have mvn; then
	# The JVM sets its own coredump_filter at start (allowed to the main
	# process: txguard-policy(5)).
	run mvn mvn -v
fi
if have go; then
	mkdir -p "$WS/g"
	printf 'package main\nfunc main() {}\n' >"$WS/g/main.go"
	run go sh -c 'cd g && go mod init example.org/g >/dev/null 2>&1 && go build -o g .'
fi

echo "ran:$ran"
[ -z "$missing" ] || echo "not on this machine:$missing"
echo ok
