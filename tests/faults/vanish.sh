#!/bin/sh
# vanish.sh — a file moves away between txguard's look at its name and the
# journal's capture of it, as when another task of the tree renames or
# removes it at that moment (an LD_PRELOAD shim on txguard does the move,
# once). The call then meets the tree as it is after the move, as if it had
# run a moment later: a write-open with O_CREAT makes a new file, one
# without O_CREAT, an unlink and a chmod fail with the kernel's own ENOENT. No
# refusal: the report holds no txguard.journal decision, and stderr no
# "denied" line. (Before, the capture's ENOENT refused the call as a
# journal failure, in 1 of about 90 runs of the concurrent summary's seed
# 3384.)
. "$(dirname "$0")/lib.sh"
: "${TG_VANISH_SHIM:?run through meson test}"
require_runs
command -v python3 >/dev/null || skip "needs python3 (reads the report)"
ws=$T/ws
st=$T/state
mkdir -p "$ws"

# run CASE NAME -- CMD: txguard under the shim, which moves NAME away the
# first time txguard saves it; keeps rc, stderr and report as $T/CASE.*.
run() {
	case_=$1 name=$2
	shift 3
	rc=0
	(cd "$ws" && env LD_PRELOAD="$TG_VANISH_SHIM" TG_VANISH_NAME="$name" TG_VANISH_ONCE="$T/$case_.once" \
		"$TXGUARD" -q --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" \
		--report "$T/$case_.json" -- "$@") >"$T/$case_.out" 2>"$T/$case_.err" || rc=$?
	echo "$rc" >"$T/$case_.rc"
	[ -e "$T/$case_.once" ] || fail "$case_: the shim never moved $name (txguard saved nothing?)"
}
# no_refusal CASE: the report lists no decision at all, stderr no denial.
no_refusal() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
assert r["decisions"] == [], r["decisions"]' "$T/$1.json" ||
		fail "$1: the report has decisions (stderr: $(cat "$T/$1.err"))"
	if grep -q "denied" "$T/$1.err"; then fail "$1: a denial on stderr: $(cat "$T/$1.err")"; fi
}

# 1. A write-open with O_CREAT of a file that moves away: a new file is
#    made, and the run commits.
echo old >"$ws/f"
run create f -- sh -c 'echo new > f'
assert_eq "create: exit" 0 "$(cat "$T/create.rc")"
no_refusal create
assert_eq "create: f" new "$(cat "$ws/f")"
assert_eq "create: f.gone" old "$(cat "$ws/f.gone")"
rm "$ws/f" "$ws/f.gone"

# 2. The same, then the command fails: the new file is the run's own and
#    goes; what moved away was never the run's to give back.
echo old >"$ws/f"
run created_rolled f -- sh -c 'echo new > f; exit 3'
assert_eq "created_rolled: exit" 3 "$(cat "$T/created_rolled.rc")"
no_refusal created_rolled
[ ! -e "$ws/f" ] || fail "created_rolled: the run's new f was not rolled back: $(cat "$ws/f")"
assert_eq "created_rolled: f.gone" old "$(cat "$ws/f.gone")"
rm "$ws/f.gone"

# 3. A write-open without O_CREAT: the kernel's ENOENT, not a refusal.
echo old >"$ws/g"
run nocreat g -- dd if=/dev/null of=g conv=nocreat,notrunc status=none
assert_eq "nocreat: exit" 1 "$(cat "$T/nocreat.rc")"
grep -q "No such file or directory" "$T/nocreat.err" || fail "nocreat: dd did not meet ENOENT: $(cat "$T/nocreat.err")"
no_refusal nocreat
[ ! -e "$ws/g" ] || fail "nocreat: g was made"
assert_eq "nocreat: g.gone" old "$(cat "$ws/g.gone")"
rm "$ws/g.gone"

# 4. An unlink whose file moves away before its stash link.
echo old >"$ws/h"
run unlink h -- rm h
assert_eq "unlink: exit" 1 "$(cat "$T/unlink.rc")"
grep -q "No such file or directory" "$T/unlink.err" || fail "unlink: rm did not meet ENOENT: $(cat "$T/unlink.err")"
no_refusal unlink
assert_eq "unlink: h.gone" old "$(cat "$ws/h.gone")"

# 5. A chmod whose file moves away before its metadata is saved.
echo old >"$ws/m"
run chmod m -- chmod 600 m
assert_eq "chmod: exit" 1 "$(cat "$T/chmod.rc")"
grep -q "No such file or directory" "$T/chmod.err" || fail "chmod: chmod did not meet ENOENT: $(cat "$T/chmod.err")"
no_refusal chmod
assert_eq "chmod: m.gone" old "$(cat "$ws/m.gone")"

no_txn "$st"
echo "ok: a file that moves away during its capture is met as the call would meet it"
