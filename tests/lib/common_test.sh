#!/bin/sh
# common_test.sh — the decisions in common.sh that turn what this kernel
# does into what a test expects. One machine only exercises one branch of
# each (this kernel has IA-32 emulation or it has not), so every branch is
# checked here with the bare results both kinds of kernel give.
set -eu
. "$(dirname "$0")/common.sh"

expect_int80() {
	got=$(tg_int80_expect "$1") || got="error"
	assert_eq "tg_int80_expect $1" "$2" "$got"
}

# IA-32 emulation on: the bare probe's mkdir runs (0) or fails with an errno.
expect_int80 0 159
expect_int80 17 159
# IA-32 emulation off: the bare probe dies by SIGSEGV.
expect_int80 139 "139 159"
# A sanitizer's abort (134) or SIGSYS bare (159) means the probe is broken,
# not the kernel: never accepted as an expectation.
expect_int80 134 error
expect_int80 159 error
expect_int80 "" error

assert_eq "kernel word, off" "refuses int 0x80 (IA-32 emulation off)" "$(tg_int80_kernel 139)"
assert_eq "kernel word, on" "runs int 0x80 (IA-32 emulation on)" "$(tg_int80_kernel 0)"

# skip_kernel exits 77 even where TXGUARD_TESTS_MUST_WORK=1; skip fails there.
rc=0; (TXGUARD_TESTS_MUST_WORK=1 skip_kernel "no such feature") 2>/dev/null || rc=$?
assert_eq "skip_kernel under MUST_WORK" 77 "$rc"
rc=0; (TXGUARD_TESTS_MUST_WORK=1 skip "no ptrace") 2>/dev/null || rc=$?
assert_eq "skip under MUST_WORK" 1 "$rc"
rc=0; (TXGUARD_TESTS_MUST_WORK=0 skip "no ptrace") 2>/dev/null || rc=$?
assert_eq "skip without MUST_WORK" 77 "$rc"
# tg_cannot_run: a preflight failure on a kernel without Landlock is a kernel
# fact (77 under MUST_WORK); with Landlock, or for another reason, it fails.
T=$(mktemp -d "${TMPDIR:-/tmp}/txguard-common-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
fake_doctor() {
	printf '#!/bin/sh\necho '"'"'{"ok":true,"landlock_abi":%s,"yama_ptrace_scope":-1}'"'"'\n' "$1" >"$T/txguard"
	chmod +x "$T/txguard"
}
echo "txguard: this policy denies reading secrets, which needs Landlock" >"$T/landlock.err"
echo "txguard: cannot trace: Operation not permitted" >"$T/ptrace.err"
cannot_run() { (TXGUARD=$T/txguard TXGUARD_TESTS_MUST_WORK=1 tg_cannot_run "$1") 2>/dev/null || echo $?; }
fake_doctor 0
assert_eq "no Landlock, Landlock error" 77 "$(cannot_run "$T/landlock.err")"
assert_eq "no Landlock, other error" 1 "$(cannot_run "$T/ptrace.err")"
fake_doctor 7
assert_eq "Landlock 7, Landlock error" 1 "$(cannot_run "$T/landlock.err")"
echo "ok common.sh decisions"
