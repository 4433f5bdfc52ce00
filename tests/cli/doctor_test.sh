#!/bin/sh
# doctor_test.sh — `txguard doctor` tells the truth about this kernel: its
# answers for the 32-bit entries are compared with what a bare probe (no
# tracer, no filter) really gets from the kernel.
set -eu
. "$TXGUARD_SOURCE_DIR/tests/lib/common.sh"
PROBE=$TXGUARD_BUILD_DIR/tests/tracer/probe
tg_tmpdir
cd "$TG_TMP"

"$TXGUARD" doctor --json >doctor.json || skip "txguard doctor: this kernel forbids what txguard needs"
field() {
	python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(json.dumps(v))' doctor.json "$1"
}

set +e
"$PROBE" int80 bare-dir >/dev/null 2>&1
int80=$?
"$PROBE" x32 >/dev/null 2>&1
x32=$?
set -e
if [ "$int80" = 139 ]; then want=false; else want=true; fi
assert_eq "ia32_emulation (bare probe exit $int80)" "$want" "$(field ia32_emulation)"
if [ "$x32" = 38 ]; then want=false; else want=true; fi
assert_eq "x32 (bare probe exit $x32)" "$want" "$(field x32)"
for k in ok seccomp_filter seccomp_ret_trace ptrace landlock_abi yama_ptrace_scope; do
	field "$k" >/dev/null || fail "doctor --json lacks $k"
done

"$TXGUARD" doctor >doctor.txt
grep -q '^IA-32 emulation: ' doctor.txt || fail "doctor does not report IA-32 emulation"
grep -q '^x32 syscall ABI: ' doctor.txt || fail "doctor does not report the x32 ABI"
grep -q '^txguard can run here\.$' doctor.txt || fail "doctor's verdict line is missing"
echo "ok doctor (int80 bare exit $int80, x32 bare exit $x32)"
