#!/bin/bash
# ab.sh — two txguard binaries on one command, alternated round by round, so
# that the machine's drift (this VM's disk and wakeup latency move by 10-20%
# between runs of bench.sh) falls on both alike. Prints each binary's median
# and min and the ratio after/before. A measurement to run by hand, not a test.
#
#   scripts/bench/ab.sh [-n ROUNDS] [-C DIR] BEFORE AFTER -- CMD...
#
# CMD is a shell command line run with $T set to the binary of the round, in
# DIR (default: the current directory), its output discarded. For example:
#
#   scripts/bench/ab.sh -n 101 -C /var/tmp/ws /tmp/old/txguard build/cmd/txguard -- \
#       '$T -q --no-default-policy -p policy.d --state-dir /var/tmp/st -w . -- touch f'
#
# The first of each pair alternates too (before, after; after, before; ...),
# so neither binary always runs on the caches the other just warmed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() {
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	exit "${1:-2}"
}

ROUNDS=41 DIR=.
while [ $# -gt 0 ]; do
	case $1 in
	-n) ROUNDS=${2:?-n ROUNDS}; shift 2 ;;
	-C) DIR=${2:?-C DIR}; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	-*) say "ab.sh: unknown option $1"; usage ;;
	*) break ;;
	esac
done
if [ $# -lt 4 ] || [ "$3" != -- ]; then usage; fi
BEFORE=$1 AFTER=$2
shift 3
CMD=$*
for b in "$BEFORE" "$AFTER"; do
	[ -x "$b" ] || die "$b is not an executable"
done
if ! [[ $ROUNDS =~ ^[0-9]+$ ]] || [ "$ROUNDS" -eq 0 ]; then
	die "-n takes a positive count, not '$ROUNDS'"
fi
cd "$DIR" || die "cannot enter $DIR"

# one BINARY LIST: one run of CMD with T=BINARY; its seconds appended to
# the variable named LIST.
one() {
	local s
	export T=$1
	timed s bash -c "$CMD" || die "the command failed under $1 (exit $?): $CMD"
	printf -v "$2" '%s %s' "${!2}" "$s"
}
a="" b=""
for ((i = 0; i < ROUNDS; i++)); do
	if ((i % 2 == 0)); then
		one "$BEFORE" a
		one "$AFTER" b
	else
		one "$AFTER" b
		one "$BEFORE" a
	fi
done
read -r ma mina <<<"$(stats "$a")"
read -r mb minb <<<"$(stats "$b")"
printf '%-7s %s\n' before "$BEFORE" after "$AFTER"
printf 'rounds  %d, command: %s\n' "$ROUNDS" "$CMD"
printf '%-7s median %.6f s  min %.6f s\n' before "$ma" "$mina" after "$mb" "$minb"
printf 'after/before  median %s  min %s\n' "$(ratio "$mb" "$ma")" "$(ratio "$minb" "$mina")"
