# common.sh — sourced by shell tests. Keep it small and boring.
set -eu

: "${TXGUARD:?run through meson test (TXGUARD unset)}"
TXGUARD_SOURCE_DIR=${TXGUARD_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}

# skip MESSAGE: exit 77, unless TXGUARD_TESTS_MUST_WORK=1 makes it a failure
# (bubblewrap's BWRAP_MUST_WORK).
skip() {
	if [ "${TXGUARD_TESTS_MUST_WORK:-0}" = 1 ]; then
		echo "FAIL (skip not allowed here): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

# skip_kernel MESSAGE: exit 77 whatever TXGUARD_TESTS_MUST_WORK says. For a
# skip that only describes this kernel or machine (no IA-32 emulation, no
# overlayfs, a Landlock ABI too old for the case, no second CPU): machines
# of one kind differ there, and CI must pass on all of them. A missing
# ptrace or seccomp is not such a skip: that is skip().
skip_kernel() {
	echo "SKIP (this kernel): $*" >&2
	exit 77
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	if [ "$2" != "$3" ]; then
		fail "$1: expected '$2', got '$3'"
	fi
}

# A fresh temporary directory, removed when the test exits.
tg_tmpdir() {
	TG_TMP=$(mktemp -d "${TMPDIR:-/tmp}/txguard-test.XXXXXX")
	trap 'rm -rf "$TG_TMP"' EXIT
}

# tg_int80_expect BARE_EXIT: the exit codes (space-separated) that a traced
# `probe int80 DIR` may end with, given how the same probe ended with no
# tracer at all. The expectation comes from the kernel, never assumed:
#   0..125  the kernel ran the call (IA-32 emulation on): the arch gate must
#           kill the traced run by SIGSYS (159) before the call runs;
#   139     the kernel refuses int 0x80 (IA-32 emulation off: the CPU fault
#           comes first, SIGSEGV): seccomp never sees the call, and the
#           traced run must die too, by that SIGSEGV or by SIGSYS.
# Any other bare exit means the probe itself is broken: status 1.
tg_int80_expect() {
	case $1 in
	139) echo "139 159" ;;
	[0-9] | [0-9][0-9] | 1[01][0-9] | 12[0-5]) echo 159 ;;
	*) return 1 ;;
	esac
}

# tg_int80_kernel BARE_EXIT: one word for the log, what the kernel did.
tg_int80_kernel() {
	if [ "$1" = 139 ]; then echo "refuses int 0x80 (IA-32 emulation off)"; else echo "runs int 0x80 (IA-32 emulation on)"; fi
}
