#!/bin/sh
# crashtest.sh COUNT [FIRST_SEED]: SIGKILL a journaled run at a random point
# (right after an op is journaled, in the middle of the rollback, or after a
# random delay), then recover: the tree must equal the one before, mtimes
# included, and no journal may be left behind.
set -eu
count=${1:-40}
first=${2:-1}
: "${TG_MUTATE:?}" "${TG_TREEHASH:?}"
base=${TG_PROPTEST_DIR:-${TMPDIR:-/tmp}}
tmp=$(mktemp -d "$base/tg-crashtest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

killed=0
seed=$first
last=$((first + count - 1))
while [ "$seed" -le "$last" ]; do
	rm -rf "$tmp/ws" "$tmp/state"
	mkdir "$tmp/ws" "$tmp/state"
	"$TG_MUTATE" "$((seed + 2000000))" 200 "$tmp/ws"
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/before"
	r=$(( (seed * 7919) % 150 ))
	[ $((seed % 7)) != 0 ] || r=$(( (seed * 7919) % 1200 ))
	case $((seed % 3)) in
	0)	# after an op is journaled, before its call runs
		end=none; set -- --die-op "$r" ;;
	1)	# in the middle of the rollback (after r records restored)
		end=rollback; set -- --die-undo "$r" ;;
	*)	# at a random time: anywhere, even inside one capture or restore
		end=rollback; set -- ;;
	esac
	n=150
	[ $((seed % 7)) != 0 ] || n=1200 # now and then a long history
	"$TG_MUTATE" "$seed" "$n" "$tmp/ws" --hook "$tmp/state" --end "$end" "$@" &
	pid=$!
	if [ $# = 0 ]; then
		sleep "0.0$(( (seed * 104729) % 10 ))"
		kill -9 "$pid" 2>/dev/null || true
	fi
	if ! wait "$pid"; then killed=$((killed + 1)); fi
	if ! "$TG_MUTATE" recover "$tmp/ws" "$tmp/state" >/dev/null; then
		echo "FAIL: seed $seed: recover failed" >&2; exit 1
	fi
	"$TG_TREEHASH" "$tmp/ws" >"$tmp/after"
	if ! cmp -s "$tmp/before" "$tmp/after"; then
		echo "FAIL: seed $seed (end=$end): recovered tree differs" >&2
		diff "$tmp/before" "$tmp/after" | head -20 >&2
		exit 1
	fi
	if [ -n "$(ls "$tmp/state/txn" 2>/dev/null)" ]; then
		echo "FAIL: seed $seed: journal left behind after recovery" >&2; find "$tmp/state" >&2; cat "$tmp"/state/txn/*/info >&2; exit 1
	fi
	seed=$((seed + 1))
done
echo "ok: $count crashes recovered ($killed killed mid-flight)"
