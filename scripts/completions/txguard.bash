# bash completion for txguard(1). Installed as
# $datadir/bash-completion/completions/txguard.
# The option lists match `txguard [SUBCOMMAND] --help`
# (tests/audit/completion_test.sh checks that).

_txguard_run_opts="-w --workspace --force-workspace -p --policy --no-default-policy --state-dir
--rollback-on --audit-only --approver --approver-timeout --timeout --kill-after --grace --max-procs
--memory-limit --max-file-size --env-allow --env-deny --strip-secrets --report
--report-fd --log --log-fd --log-level --lock --tx --tx-failure --journal-sync -q --quiet
-v --verbose --color -h --help -V --version"
_txguard_subcmds="run learn policy doctor recover status log show diff undo redo begin commit rollback help"

# Options of one subcommand ("policy check" is passed as "policy-check").
_txguard_sub_opts()
{
	local ws="-w --workspace --state-dir"
	case $1 in
	run | "") echo "$_txguard_run_opts" ;;
	learn) echo "-o --output $_txguard_run_opts" ;;
	policy-check) echo "-p --policy --no-default-policy -h --help" ;;
	policy-explain) echo "-p --policy --no-default-policy -w --workspace --json --path --op --connect --udp --signal -h --help" ;;
	doctor) echo "--json -h --help" ;;
	recover) echo "$ws --dry-run --force --json -h --help" ;;
	diff | commit | rollback) echo "$ws -h --help" ;;
	log | show | status) echo "$ws --json -h --help" ;;
	undo) echo "$ws --force --dry-run --json -h --help" ;;
	redo) echo "$ws --force --dry-run --json -h --help" ;;
	begin) echo "--tx $ws -h --help" ;;
	*) echo "-h --help" ;;
	esac
}

# Options that take a value (the next word is not a subcommand or a flag).
_txguard_takes_arg()
{
	case $1 in
	-w | --workspace | -p | --policy | --state-dir | --rollback-on | --timeout | \
	--kill-after | --grace | --max-procs | --memory-limit | --max-file-size | \
	--env-allow | --env-deny | --report | --report-fd | --log | --log-fd | \
	--log-level | --lock | --tx | --tx-failure | --journal-sync | --color | --approver | --approver-timeout) return 0 ;;
	esac
	return 1
}

_txguard()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local i w sub="" skip=0
	COMPREPLY=()

	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((skip)); then
			skip=0
			continue
		fi
		if [[ $w == -- ]]; then
			# Everything after "--" is the command: complete it like `command`.
			if ((i == COMP_CWORD - 1)); then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return 0
		fi
		if [[ $w == -* ]]; then
			[[ $w != *=* ]] && _txguard_takes_arg "$w" && skip=1
			continue
		fi
		if [[ -z $sub ]]; then
			sub=$w
		elif [[ $sub == policy && ($w == check || $w == explain) ]]; then
			sub=policy-$w
		fi
	done

	case $prev in
	-w | --workspace | --state-dir)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0 ;;
	-p | --policy | --report | --log)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0 ;;
	--rollback-on)
		mapfile -t COMPREPLY < <(compgen -W "failure signal never always" -- "$cur")
		return 0 ;;
	--log-level)
		mapfile -t COMPREPLY < <(compgen -W "decisions exec all" -- "$cur")
		return 0 ;;
	--lock)
		mapfile -t COMPREPLY < <(compgen -W "wait fail" -- "$cur")
		return 0 ;;
	--tx-failure)
		mapfile -t COMPREPLY < <(compgen -W "self all" -- "$cur")
		return 0 ;;
	--journal-sync)
		mapfile -t COMPREPLY < <(compgen -W "auto full batch" -- "$cur")
		return 0 ;;
	--color)
		mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur")
		return 0 ;;
	esac
	_txguard_takes_arg "$prev" && return 0

	if [[ $sub == policy ]]; then
		mapfile -t COMPREPLY < <(compgen -W "check explain" -- "$cur")
	elif [[ $sub == help ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$_txguard_subcmds" -- "$cur")
	elif [[ $cur == -* ]]; then
		local opts
		opts=$(_txguard_sub_opts "$sub")
		[[ -z $sub || $sub == run ]] && opts+=" --"
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	elif [[ -z $sub ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$_txguard_subcmds" -- "$cur")
	elif [[ $sub == policy-check ]]; then
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
	return 0
}
complete -F _txguard txguard
