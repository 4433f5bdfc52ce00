# zsh_complete.zsh COMPDIR LINE — type LINE and a TAB into an interactive zsh
# that loaded COMPDIR's completions; print what came back on the terminal
# (the listing, or the completed line), escape sequences removed, one word a
# line. Used by completion_test.sh.
zmodload zsh/zpty || exit 77
export TERM=dumb
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; unsetopt beep; zstyle ':completion:*' list-prompt ''; LISTMAX=10000; print READY"
out="" chunk=""
# Wait for the setup to finish, then type.
for i in {1..50}; do
	zpty -r -t z chunk && out+=$chunk
	[[ $out == *READY* ]] && break
	sleep 0.1
done
zpty -w -n z "$2"$'\t'
out=""
# Read until the terminal has been quiet for a second (5 s at most).
idle=0
for i in {1..50}; do
	if zpty -r -t z chunk; then
		out+=$chunk
		idle=0
	else
		(( ++idle >= 10 )) && break
		sleep 0.1
	fi
done
zpty -d z
print -r -- "$out" | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' | tr '\r\a\b\t' '    ' | tr -s ' ' '\n' | grep -v '^$'
