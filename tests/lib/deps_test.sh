#!/bin/sh
# deps_test.sh — scripts/deps.sh passes on this tree, and fails on a copy of
# it given each kind of breach (so that its pass means something).
. "$(dirname "$0")/common.sh"
tg_tmpdir
src=$TXGUARD_SOURCE_DIR
"$src/scripts/deps.sh" --quiet || fail "scripts/deps.sh finds a breach in this tree"

# A copy of core/, cmd/ and the script (no git there: it lists by find).
copy_tree() {
	rm -rf "$TG_TMP/t" && mkdir -p "$TG_TMP/t/scripts" &&
		cp -r "$src/core" "$src/cmd" "$TG_TMP/t/" && cp "$src/scripts/deps.sh" "$TG_TMP/t/scripts/" ||
		fail "cannot copy the tree"
}
# expect_breach WHAT RULE: deps.sh on the copy fails and names RULE.
expect_breach() {
	if out=$("$TG_TMP/t/scripts/deps.sh" --quiet 2>&1); then
		fail "$1: deps.sh passed"
	fi
	echo "$out" | grep -q "$2" || fail "$1: deps.sh said '$out', not '$2'"
}
# breach WHAT FILE LINE RULE: the copy with LINE appended to FILE.
breach() {
	copy_tree
	printf '%s\n' "$3" >> "$TG_TMP/t/$2"
	expect_breach "$1" "$4"
}

copy_tree
"$TG_TMP/t/scripts/deps.sh" --quiet || fail "a plain copy of the tree does not pass"
breach "upward include" core/journal/journal.c '#include "history/history.h"' "rule 1"
breach "include across a layer" core/trace/tracer.c '#include "policy/policy.h"' "rule 1"
breach "private header" cmd/run.c '#include "journal/journal_int.h"' "rule 2"
breach "bare include from elsewhere" core/base/util.c '#include "journal.h"' "rule 3"
copy_tree
mkdir -p "$TG_TMP/t/core/newmod" && touch "$TG_TMP/t/core/newmod/x.c"
expect_breach "a folder without a layer" "rule 4"
echo "ok: deps.sh passes here and names each kind of breach"
