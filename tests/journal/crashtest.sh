#!/bin/sh
# crashtest.sh COUNT [FIRST_SEED]: SIGKILL a journaled run at a random point
# (right after an op is journaled, in the middle of the rollback, or after a
# random delay), then recover: the tree must equal the one before, mtimes
# included, and no journal may be left behind. Every 30th seed also makes a
# hand edit after the crash (a random file, past the 5 s margin): recover
# must refuse (edit kept, journal kept) or leave the edit alone; --force
# then gives the tree of before.
set -eu
count=${1:-40}
first=${2:-1}
: "${TG_MUTATE:?}" "${TG_TREEHASH:?}"
base=${TG_PROPTEST_DIR:-${TMPDIR:-/tmp}}
tmp=$(mktemp -d "$base/tg-crashtest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

killed=0 edits=0 refused=0
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
	edited=
	if [ $((seed % 30)) = 3 ]; then
		nl=$(printf '\nx'); nl=${nl%x} # one path per line: none with a newline
		edited=$(cd "$tmp/ws" && find . -type f -name 'f*' ! -path "*$nl*" | sort | sed -n "$((1 + seed % 5))p")
	fi
	if [ -n "$edited" ]; then
		sleep 6 # past the margin: a hand edit, not the run's own last write
		size=$(stat -c %s "$tmp/ws/$edited")
		touch -r "$tmp/ws/$edited" "$tmp/mref"
		echo "EDIT $seed" >>"$tmp/ws/$edited"
		cp "$tmp/ws/$edited" "$tmp/edited"
		rc=0
		"$TG_MUTATE" recover "$tmp/ws" "$tmp/state" >/dev/null 2>&1 || rc=$?
		edits=$((edits + 1))
		case $rc in
		4)	refused=$((refused + 1))
			[ -n "$(ls "$tmp/state/txn")" ] || { echo "FAIL: seed $seed: refused but journal gone" >&2; exit 1; } ;;
		0)	;;
		*)	echo "FAIL: seed $seed: recover after an edit failed ($rc)" >&2; exit 1 ;;
		esac
		# the edit is kept: at its name, or moved back with its file by
		# the undo of a rename (a move loses nothing)
		if ! cmp -s "$tmp/edited" "$tmp/ws/$edited" 2>/dev/null; then
			moved=$(cd "$tmp/ws" && find . -type f ! -path "*$nl*" -exec cmp -s "$tmp/edited" {} \; -print | head -n 1)
			[ -n "$moved" ] || { echo "FAIL: seed $seed: the hand edit of $edited was overwritten" >&2; exit 1; }
			edited=$moved
			rc=moved # the restore set its times: keep those
		fi
		if ! "$TG_MUTATE" recover "$tmp/ws" "$tmp/state" --force >/dev/null; then
			echo "FAIL: seed $seed: recover --force failed" >&2; exit 1
		fi
		# An edit the restore does not overwrite stays (rc 0: a file the
		# run never touched; rc 4 then --force: one whose only record is
		# its metadata): take it back out to compare with before, keeping
		# the times the restore left (rc 0: the ones before the edit).
		if cmp -s "$tmp/edited" "$tmp/ws/$edited" 2>/dev/null; then
			[ $rc = 0 ] || touch -r "$tmp/ws/$edited" "$tmp/mref"
			truncate -s "$size" "$tmp/ws/$edited"
			touch -r "$tmp/mref" "$tmp/ws/$edited"
		fi
	elif ! "$TG_MUTATE" recover "$tmp/ws" "$tmp/state" >/dev/null; then
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
echo "ok: $count crashes recovered ($killed killed mid-flight; $edits hand edits after the crash, $refused refused)"
