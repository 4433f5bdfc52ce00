# help_opts.sh — sourced by manpage_test.sh and completion_test.sh (after
# common.sh, with $TG_TMP set).
# all_help_opts FILE: write every long option that `txguard --help` and the
# --help of each subcommand it lists print, sorted, one a line, to FILE. The
# subcommands are read from the "Subcommands:" block of --help, so a new one
# is covered without touching the tests.
all_help_opts() {
	local sub subs=()
	"$TXGUARD" --help >"$TG_TMP/help.main" || fail "'txguard --help' exits $?"
	while read -r sub; do
		subs+=("$sub")
	done < <(sed -n '/^Subcommands:/,/^$/p' "$TG_TMP/help.main" |
		sed -n 's/^  \([a-z][a-z]*\)\( \(check\|explain\)\)\{0,1\}.*/\1\2/p' | grep -vx help)
	[ "${#subs[@]}" -ge 5 ] || fail "found only ${#subs[@]} subcommands in 'txguard --help'"
	cp "$TG_TMP/help.main" "$TG_TMP/help.all"
	for sub in "${subs[@]}"; do
		# shellcheck disable=SC2086  # "policy check" is two words on purpose
		"$TXGUARD" $sub --help >>"$TG_TMP/help.all" 2>&1 || fail "'txguard $sub --help' exits $?"
	done
	grep -o -- '--[a-z][a-z0-9-]*' "$TG_TMP/help.all" | sort -u >"$1"
}
