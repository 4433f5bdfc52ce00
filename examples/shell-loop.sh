#!/bin/sh
# shell-loop.sh — run a list of steps, each as its own txguard transaction.
#
#   examples/shell-loop.sh 'make generate' 'make' './run-migrations.sh'
#
# A step that fails (non-zero exit, signal, policy kill, timeout) has already
# been undone by txguard when we get control back: the workspace is as the
# previous step left it, so the loop can stop -- or retry, or skip -- on a
# clean tree. Each step's JSON report (txguard(1), "JSON OUTPUT") is kept in
# $REPORT_DIR; outside the workspace, so the reports are never part of a
# transaction.
#
# Environment: TXGUARD (the binary, default txguard), TXGUARD_OPTS (extra
# options, word-split: e.g. "--timeout 10m --strip-secrets"), REPORT_DIR.
set -u
TXGUARD=${TXGUARD:-txguard}
TXGUARD_OPTS=${TXGUARD_OPTS:-}
REPORT_DIR=${REPORT_DIR:-${TMPDIR:-/tmp}/txguard-reports.$$}
mkdir -p "$REPORT_DIR" || exit 1

# json_field FILE KEY: the value of a top-level string field of a report.
# (sed is enough for the flat fields used here; use jq or python for more.)
json_field() {
	sed -n "s/.*\"$2\":\"\\([^\"]*\\)\".*/\\1/p" "$1"
}

n=0
for step in "$@"; do
	n=$((n + 1))
	report=$REPORT_DIR/step-$n.json
	# shellcheck disable=SC2086  # TXGUARD_OPTS is a list of options
	"$TXGUARD" $TXGUARD_OPTS --report "$report" -- sh -c "$step"
	rc=$?
	outcome=$(json_field "$report" outcome)
	echo "step $n: exit $rc, ${outcome:-no report}: $step"
	# Which rules said no, for the log (or for an agent to read).
	grep -o '"rule":"[^"]*"' "$report" 2>/dev/null | sort -u | sed 's/^/    /'
	case $outcome in
	committed) ;;
	rolled_back)
		echo "step $n failed and was rolled back; stopping (reports in $REPORT_DIR)"
		exit "$rc" ;;
	*)
		echo "step $n: txguard could not run or restore it ($outcome); see $report" >&2
		exit "$rc" ;;
	esac
done
echo "all $n steps committed (reports in $REPORT_DIR)"
