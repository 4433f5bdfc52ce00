#!/bin/bash
# ci-action.sh — what action.yml (the composite CI action) runs. Kept here,
# not inline in the YAML, so that tests/audit/action_test.sh runs it as is.
#
#   ci-action.sh install   build and install txguard from the action's own
#                          checkout (when it is not on PATH already)
#   ci-action.sh run       run $INPUT_COMMAND under txguard
#
# run reads the action's inputs from the environment: INPUT_COMMAND (a bash
# command line, required), INPUT_POLICY (extra policy files, one a line),
# INPUT_TIMEOUT (e.g. 30m), INPUT_REPORT (the report's path), INPUT_ARGS
# (more txguard options, split on blanks), INPUT_WORKING_DIRECTORY. It
# exits like the command (the step fails like it), writes the outputs
# exit-code, outcome and report to $GITHUB_OUTPUT, one ::error:: annotation
# per denial and per rollback, and a line to $GITHUB_STEP_SUMMARY.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

install_txguard() {
	if command -v txguard >/dev/null 2>&1; then
		echo "txguard: using $(command -v txguard) ($(txguard --version))"
		return 0
	fi
	"$here/scripts/install-deps.sh" || return 1
	local build=${RUNNER_TEMP:-/tmp}/txguard-build
	meson setup "$build" "$here" --prefix=/usr -Dtests=false >/dev/null || return 1
	ninja -C "$build" >/dev/null || return 1
	sudo_if meson install -C "$build" --quiet || return 1
	echo "txguard: installed $(txguard --version)"
}

sudo_if() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The report's one field, without jq on the runner.
field() {
	python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")
except Exception: print("")' "$1" "$2"
}

# GitHub's workflow-command escaping of a message.
escape() {
	local s=${1//'%'/'%25'}
	s=${s//$'\r'/'%0D'}
	printf '%s' "${s//$'\n'/'%0A'}"
}

run_command() {
	: "${INPUT_COMMAND:?the action needs a command}"
	local report=${INPUT_REPORT:-txguard-report.json}
	case $report in /*) ;; *) report=$PWD/$report ;; esac
	mkdir -p "$(dirname "$report")"
	local err=${RUNNER_TEMP:-/tmp}/txguard-stderr.$$
	local argv=(txguard --color never --report "$report")
	local p
	while IFS= read -r p; do
		[ -n "$p" ] && argv+=(--policy "$p")
	done <<<"${INPUT_POLICY:-}"
	[ -n "${INPUT_TIMEOUT:-}" ] && argv+=(--timeout "$INPUT_TIMEOUT")
	# shellcheck disable=SC2206  # extra options are split on blanks on purpose
	[ -n "${INPUT_ARGS:-}" ] && argv+=($INPUT_ARGS)
	if [ -n "${INPUT_WORKING_DIRECTORY:-}" ]; then
		cd "$INPUT_WORKING_DIRECTORY" || return 125
	fi
	# stderr to the log as it comes, and to a file for the annotations.
	{ "${argv[@]}" -- bash -c "$INPUT_COMMAND" 2>&1 1>&3 3>&- | tee "$err" >&2; } 3>&1
	local status=${PIPESTATUS[0]}
	local outcome line
	outcome=$(field "$report" outcome)
	while IFS= read -r line; do
		case $line in
		"txguard: denied "* | "txguard: killed the tree"*)
			echo "::error title=txguard denied::$(escape "${line#txguard: }")" ;;
		esac
	done <"$err"
	rm -f "$err"
	case $outcome in
	rolled_back) echo "::error title=txguard::the command failed (exit $status); its changes were rolled back" ;;
	restore_failed) echo "::error title=txguard::the restore failed: run 'txguard recover' in the workspace" ;;
	setup_failed) echo "::error title=txguard::txguard could not run the command: $(escape "$(field "$report" error)")" ;;
	esac
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		printf 'exit-code=%s\noutcome=%s\nreport=%s\n' "$status" "$outcome" "$report" >>"$GITHUB_OUTPUT"
	fi
	if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
		printf 'txguard: `%s` exited %s, outcome **%s** (report: `%s`)\n' \
			"$INPUT_COMMAND" "$status" "${outcome:-none}" "$report" >>"$GITHUB_STEP_SUMMARY"
	fi
	return "$status"
}

case ${1:-} in
install) install_txguard ;;
run) run_command ;;
*) echo "usage: ci-action.sh install|run" >&2; exit 2 ;;
esac
