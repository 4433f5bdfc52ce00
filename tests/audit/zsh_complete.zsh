# zsh_complete.zsh COMPDIR LINE — type LINE and a TAB into an interactive zsh
# that loaded COMPDIR's completions; print what came back on the terminal
# (the listing, or the completed line), escape sequences removed, one word a
# line. Used by completion_test.sh.
#
# No sleeps to guess when zsh is done: setup ends by printing a marker, and
# after the TAB a key bound to a widget that shows another marker is typed;
# zle handles keys in order, so the second marker comes after the completion.
# The markers are written split in quotes so the echo of the typed text
# cannot match them.
zmodload zsh/zpty || exit 77
export TERM=dumb
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; unsetopt beep; zstyle ':completion:*' list-prompt ''; LISTMAX=10000; _ct_done() { zle -M 'CT_'DONE }; zle -N _ct_done; bindkey '^Xd' _ct_done; print 'CT_'READY"

# read_until MARK: append the terminal's output to $out until MARK shows (30 s at most).
read_until() {
	local chunk i
	for i in {1..300}; do
		while zpty -r -t z chunk; do out+=$chunk; done
		[[ $out == *$1* ]] && return 0
		sleep 0.1
	done
	print -u2 "zsh_complete: no $1 from zsh after 30 s"
	return 1
}
out=""
read_until CT_READY || exit 1
out=""
zpty -w -n z "$2"$'\t\x18d'
read_until CT_DONE || exit 1
zpty -d z
print -r -- "${out%%CT_DONE*}" | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tr '\r\a\b\t' '    ' | tr -s ' ' '\n' | grep -v '^$'
