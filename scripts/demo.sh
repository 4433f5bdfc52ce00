#!/bin/sh
# demo.sh [TXGUARD] — txguard's main job on a small throwaway workspace:
# a failing command is rolled back, a forbidden one is denied, a good one is
# committed. Everything happens in temporary directories; nothing outside
# them is touched even if txguard were broken (no command here can harm the
# machine).
set -eu
TXGUARD=${1:-${TXGUARD:-txguard}}
TXGUARD=$(command -v "$TXGUARD" || echo "$TXGUARD")

ws=$(mktemp -d /tmp/txguard-demo.XXXXXX)
# /tmp is writable under the default policy, so "outside" is in $HOME.
outside=$(mktemp -d "$HOME/txguard-demo-outside.XXXXXX")
trap 'rm -rf "$ws" "$outside"' EXIT
mkdir "$ws/src"
echo 'int main(void) { return 0; }' >"$ws/src/main.c"
echo 'hello' >"$ws/notes.txt"
chmod 640 "$ws/notes.txt"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step "txguard -- sh -c 'rm -rf src; echo oops > notes.txt; exit 1'"
rc=0
"$TXGUARD" -w "$ws" -- sh -c 'rm -rf src; echo oops > notes.txt; touch junk; exit 1' || rc=$?
echo "exit status $rc; the workspace now holds:"
(cd "$ws" && ls -l src notes.txt && cat notes.txt && ls junk 2>&1 | sed 's/^/  /')

step "txguard -- sh -c 'echo x > $outside/stolen'   (a write outside the workspace)"
rc=0
"$TXGUARD" -w "$ws" -- sh -c "echo x > '$outside/stolen'" || rc=$?
echo "exit status $rc; $outside/stolen exists: $([ -e "$outside/stolen" ] && echo yes || echo no)"

step "txguard -- git push --force origin main   (a command the policy forbids)"
rc=0
"$TXGUARD" -w "$ws" -- git push --force origin main || rc=$?
echo "exit status $rc"

step "txguard --report report.json -- sh -c 'echo world >> notes.txt'   (success: committed)"
"$TXGUARD" -w "$ws" --report "$outside/report.json" -- sh -c 'echo world >> notes.txt'
cat "$ws/notes.txt"
echo "report: $(head -c 300 "$outside/report.json")..."
