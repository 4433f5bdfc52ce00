#!/bin/bash
# cpython-compare.sh — is txguard transparent for software nobody here wrote?
#
# Runs CPython's own regression tests (Debian: libpython3.11-testsuite) twice, natively
# and under `txguard --`, and compares the outcome of every single test case.
# Not part of the CI suite: it takes a few minutes. Run it by hand:
#
#   scripts/cpython-compare.sh [-j N] [--keep] [TEST...]
#     TEST   regrtest names (default: test_os test_shutil test_subprocess test_signal
#            test_threading test_tempfile test_pty)
#     -j N   regrtest worker processes, the same for both runs (default 2)
#     --keep keep the two work directories (logs, junit XML, txguard's event log)
#
# Environment: TXGUARD (default build/cmd/txguard), PYTHON (default /usr/bin/python3).
#
# How txguard runs it: workspace = a fresh temp dir, which is also the cwd and TMPDIR of
# the tests (so their scratch files are workspace changes, journaled like any other);
# policy = this tree's policy.d (--no-default-policy -p policy.d), plus
# scripts/bench/cpython.yaml if that file exists — the extra places the tests must write
# outside the workspace, each with its reason in the file. --rollback-on never, so that
# a failing run keeps its junit XML for the comparison (the rollback itself is tested
# elsewhere). Both runs get PYTHONDONTWRITEBYTECODE=1, so neither writes __pycache__
# under /usr.
#
# Prints both regrtest result lines with counts, then "verdict: same" or
# "verdict: DIFFERENT: ..." (exit 0 / 1; 2 when it could not run).
set -u
export LC_ALL=C.UTF-8

REPO=$(cd "$(dirname "$0")/.." && pwd)
TXGUARD=${TXGUARD:-$REPO/build/cmd/txguard}
PYTHON=${PYTHON:-/usr/bin/python3}
JOBS=2
KEEP=0
TESTS=()
while [ $# -gt 0 ]; do
	case $1 in
	-j) JOBS=${2:?-j N}; shift ;;
	-j*) JOBS=${1#-j} ;;
	--keep) KEEP=1 ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	-*) echo "cpython-compare: unknown option $1" >&2; exit 2 ;;
	*) TESTS+=("$1") ;;
	esac
	shift
done
[ ${#TESTS[@]} -gt 0 ] || TESTS=(test_os test_shutil test_subprocess test_signal test_threading test_tempfile test_pty)

die() { echo "cpython-compare: $*" >&2; exit 2; }

"$PYTHON" -c 'import test.libregrtest' 2>/dev/null ||
	die "$PYTHON has no regression tests: apt-get install libpython3.11-testsuite"
[ -x "$TXGUARD" ] || die "no txguard binary at $TXGUARD (build it: meson setup build && ninja -C build, or set TXGUARD)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cpython-compare.XXXXXX")
if [ "$KEEP" = 1 ]; then
	trap 'echo "kept: $WORK" >&2' EXIT
else
	trap 'rm -rf "$WORK"' EXIT
fi

POLICY=(--no-default-policy -p "$REPO/policy.d")
[ -f "$REPO/scripts/bench/cpython.yaml" ] && POLICY+=(-p "$REPO/scripts/bench/cpython.yaml")

# run NAME [PREFIX...]: one regrtest run in $WORK/NAME/ws; log, junit and time beside it.
run() {
	local dir="$WORK/$1" t0 t1 rc
	shift
	mkdir -p "$dir/ws"
	t0=$EPOCHREALTIME
	(cd "$dir/ws" && TMPDIR="$dir/ws" PYTHONDONTWRITEBYTECODE=1 \
		"$@" "$PYTHON" -m test -j"$JOBS" --junit-xml "$dir/ws/junit.xml" "${TESTS[@]}") \
		</dev/null >"$dir/out.txt" 2>&1
	rc=$?
	t1=$EPOCHREALTIME
	echo "$rc" >"$dir/rc"
	awk -v a="${t0/,/.}" -v b="${t1/,/.}" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/secs"
	# Move the XML out before anything else can touch the workspace.
	[ -f "$dir/ws/junit.xml" ] && mv "$dir/ws/junit.xml" "$dir/junit.xml"
}

echo "cpython-compare: ${TESTS[*]} (-j$JOBS) with $("$PYTHON" --version 2>&1), natively..." >&2
run native
echo "cpython-compare: ...and under $TXGUARD" >&2
mkdir -p "$WORK/state"
run txguard "$TXGUARD" "${POLICY[@]}" --rollback-on never --state-dir "$WORK/state" \
	--log "$WORK/txguard-events.jsonl" -w "$WORK/txguard/ws" --

# summary NAME: the result line, regrtest's own summary line, and junit counts.
summary() {
	local dir="$WORK/$1" res line
	res=$(grep -m1 '^== Tests result:' "$dir/out.txt" || echo '== Tests result: (none: regrtest did not finish) ==')
	line=$(grep -m1 -E '^(All [0-9]+ tests? OK\.|[0-9]+ tests? failed|[0-9]+ tests? OK\.)' "$dir/out.txt")
	printf '%-8s %s  %s  exit %s, %s s\n' "$1:" "$res" "${line:-}" "$(cat "$dir/rc")" "$(cat "$dir/secs")"
	printf '%-8s %s\n' "" "$(junit_counts "$dir/junit.xml")"
}

junit_counts() {
	[ -f "$1" ] || { echo "no junit XML"; return; }
	"$PYTHON" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
c = {"passed": 0, "skipped": 0, "failure": 0, "error": 0}
for tc in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    tags = {k.tag for k in tc}
    c["error" if "error" in tags else "failure" if "failure" in tags
      else "skipped" if "skipped" in tags else "passed"] += 1
print("test cases: %d (passed %d, skipped %d, failures %d, errors %d)"
      % (sum(c.values()), c["passed"], c["skipped"], c["failure"], c["error"]))
EOF
}

summary native
summary txguard
if [ -s "$WORK/txguard-events.jsonl" ]; then
	n=$(grep -c '"deny"\|"kill"\|"audit"' "$WORK/txguard-events.jsonl")
	echo "txguard events logged: $(wc -l <"$WORK/txguard-events.jsonl") ($n deny/kill/audit); first ones:"
	grep '"deny"\|"kill"\|"audit"' "$WORK/txguard-events.jsonl" | head -5 | cut -c1-300
fi

# Compare: regrtest's result line, then the outcome of every test case by name.
"$PYTHON" - "$WORK" <<'EOF'
import os, re, sys, xml.etree.ElementTree as ET
work = sys.argv[1]

def outcomes(name):
    path = os.path.join(work, name, "junit.xml")
    if not os.path.exists(path):
        return None
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        tags = {k.tag for k in tc}
        out[tc.get("name")] = ("error" if "error" in tags else "failure" if "failure" in tags
                               else "skipped" if "skipped" in tags else "passed")
    return out

def result(name):
    with open(os.path.join(work, name, "out.txt"), errors="replace") as f:
        m = re.search(r"^== Tests result: (.*) ==$", f.read(), re.M)
    return m.group(1) if m else None

diffs = []
rn, rt = result("native"), result("txguard")
if rn != rt:
    diffs.append("result %s natively, %s under txguard" % (rn, rt))
on, ot = outcomes("native"), outcomes("txguard")
if on is None or ot is None:
    diffs.append("junit XML missing (%s)" % ("native" if on is None else "txguard"))
else:
    for t in sorted(set(on) | set(ot)):
        a, b = on.get(t, "absent"), ot.get(t, "absent")
        if a != b:
            diffs.append("%s: %s natively, %s under txguard" % (t, a, b))
if not diffs:
    print("verdict: same (%d test cases, identical outcomes)" % len(on))
    sys.exit(0)
print("verdict: DIFFERENT: %d difference(s)" % len(diffs))
for d in diffs[:25]:
    print("  " + d)
if len(diffs) > 25:
    print("  ... %d more" % (len(diffs) - 25))
print("(a timing-sensitive test can flake: re-run just that test, e.g. "
      "scripts/cpython-compare.sh -j1 test_signal, before calling it txguard's doing)")
sys.exit(1)
EOF
