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
