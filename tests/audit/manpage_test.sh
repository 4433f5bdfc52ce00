#!/bin/bash
# manpage_test.sh — docs/txguard.1 renders without warnings, documents the
# exit codes, and lists exactly the long options that `txguard --help` and
# every `txguard SUBCOMMAND --help` print (both ways).
. "$(dirname "$0")/../lib/common.sh"
DOCS=$TXGUARD_SOURCE_DIR/docs
tg_tmpdir

# --- rendering ---------------------------------------------------------------
for page in "$DOCS/txguard.1" "$DOCS/txguard-policy.5"; do
	[ -e "$page" ] || continue
	if command -v groff >/dev/null; then
		groff -man -Tutf8 -ww -z "$page" 2>"$TG_TMP/groff.err"
		[ -s "$TG_TMP/groff.err" ] && fail "groff warns on $page: $(cat "$TG_TMP/groff.err")"
	fi
	if command -v man >/dev/null; then
		MANWIDTH=80 man -l "$page" >"$TG_TMP/page.txt" 2>"$TG_TMP/man.err" ||
			fail "man -l $page failed: $(cat "$TG_TMP/man.err")"
		grep -q '^NAME' "$TG_TMP/page.txt" || fail "man -l $page: no NAME section"
	fi
done
[ -e "$DOCS/txguard-policy.5" ] || echo "note: docs/txguard-policy.5 not there yet" >&2

# The exit-code contract (docs/interfaces.md) is in the page.
awk '/^\.SH EXIT STATUS/{on=1; next} /^\.SH/{on=0} on' "$DOCS/txguard.1" >"$TG_TMP/exit.roff"
for code in 125 126 127 '128+'; do
	grep -q "$code" "$TG_TMP/exit.roff" || fail "EXIT STATUS does not mention $code"
done

# --- options, both ways --------------------------------------------------------
if ! "$TXGUARD" --help >/dev/null 2>&1; then
	skip "'$TXGUARD --help' exits non-zero: the CLI's help is not there yet, cannot compare options"
fi

# shellcheck source=help_opts.sh
. "$TXGUARD_SOURCE_DIR/tests/audit/help_opts.sh"
all_help_opts "$TG_TMP/help.opts"

# In roff a long option is written \-\-name\-with\-dashes.
grep -o '\\-\\-[a-z]\([a-z0-9]\|\\-\)*' "$DOCS/txguard.1" | sed 's/\\//g' | sort -u >"$TG_TMP/man.opts"

[ -s "$TG_TMP/help.opts" ] || fail "no long option found in --help"
missing=$(comm -23 "$TG_TMP/help.opts" "$TG_TMP/man.opts")
extra=$(comm -13 "$TG_TMP/help.opts" "$TG_TMP/man.opts")
[ -z "$missing" ] || fail "in --help but not in txguard.1: $(echo "$missing" | tr "\n" " ")"
[ -z "$extra" ] || fail "in txguard.1 but in no --help: $(echo "$extra" | tr "\n" " ")"
# Every subcommand --help lists has its entry under COMMANDS.
awk '/^\.SH COMMANDS/{on=1; next} /^\.SH/{on=0} on' "$DOCS/txguard.1" >"$TG_TMP/commands.roff"
sed -n '/^Subcommands:/,/^$/p' "$TG_TMP/help.main" |
	sed -n 's/^  \([a-z][a-z]*\)\( \(check\|explain\)\)\{0,1\}.*/\1\2/p' >"$TG_TMP/help.subs"
while read -r sub; do
	grep -q "^\.B[IR]* *\"\{0,1\}$sub\b" "$TG_TMP/commands.roff" || fail "txguard.1 COMMANDS has no entry for '$sub'"
done <"$TG_TMP/help.subs"
echo "manpage: $(wc -l <"$TG_TMP/help.opts") long options and $(wc -l <"$TG_TMP/help.subs") subcommands agree"
