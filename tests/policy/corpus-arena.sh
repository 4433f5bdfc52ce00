#!/bin/sh
# corpus-arena.sh — run the corpora for real, each line as
# `txguard -- sh -c LINE`, inside the throwaway arena (scripts/arena):
#   destructive.txt  every line refused, nothing outside the workspace changed
#   wrappers.txt     the same through env, xargs, find -exec, bash -c, busybox,
#                    git aliases, #! scripts, python3, perl and redirections
#   inside.txt       destructive lines aimed at the workspace that then fail:
#                    the workspace comes back exactly (names, modes, bytes)
# and prints the counts for the report.
#
# Never run the inside half on a real machine: it only runs when the arena
# says it is one ($ARENA = 1).
. "$(dirname "$0")/../lib/common.sh"

HERE="$TXGUARD_SOURCE_DIR/tests/policy"
CORPUS="$HERE/destructive.txt"
POLICY="$TXGUARD_SOURCE_DIR/policy.d"

# What the corpus aims at, outside the workspace. The arena's lower layer
# is the live host, whose own activity (package installs, shell history)
# shows through; so entries are compared by name, mode, owner, symlink
# target and device. A change made inside the arena copies the file up to
# the arena's tmpfs, which changes its device: content and metadata changes
# show there, host-side changes to existing files do not. Names the host's
# package manager churns are left out.
HOST_NOISE='\.dpkg-(new|tmp|old|dist)|^/var/(log|lib|cache)/(apt|dpkg)|^/root/\.(bash_history|local|cache|viminfo|lesshst)|^/tmp '

list_entries() {
	find "$@" ! -name 'txguard-corpus*' -printf '%p %y %m %u %g %D %l\n' 2>/dev/null |
		awk '$2 == "d" { print $1, $3, $4, $5; next } { print }' | grep -Ev "$HOST_NOISE" | sort
}

# Around each run: the top levels, in one find (a find per directory was
# most of the corpus's running time).
fingerprint() {
	set --
	for d in / /etc /usr /usr/bin /usr/lib /usr/local /usr/share /var /var/lib /var/log \
		/home /root /opt /srv /boot /dev "$HOME" "$HOME/.ssh"; do
		[ -e "$d" ] && set -- "$@" "$d"
	done
	list_entries "$@" -maxdepth 1 -mindepth 1
	sha256sum /etc/passwd /etc/hosts "$HOME/.profile" "$HOME/.ssh/id_test" 2>/dev/null
}

# Once before and once after: everything under /etc, /usr/local, /boot and
# the homes but the caches (writable places may change: that is their job).
deep_fingerprint() {
	list_entries /etc /usr/local /boot /root "$HOME" \( -path /root/.cache -o -path /root/.local \
		-o -path "$HOME/.cache" -o -path "$HOME/.npm" \) -prune -o
}

ws_state() {
	(cd "$1" && find . -printf '%p %y %m %s %l\n' | sort && find . -type f -exec cat {} + 2>/dev/null) |
		sha256sum
}

# run_file FILE MODE: MODE "deny" wants a denial and no change outside the
# workspace; "restore" wants the workspace exactly as before the run.
run_file() {
	file=$1 mode=$2
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		n=$((n + 1))
		ws=/srv/txguard-corpus/ws$n
		mkdir -p "$ws/src" && echo 'int main(void){return 0;}' > "$ws/src/main.c"
		chmod 644 "$ws/src/main.c"
		ws_before=$(ws_state "$ws")
		# The state after the previous line is the state before this one
		# (making the workspace touches only txguard-corpus*, which the
		# fingerprint leaves out): one fingerprint per line, not two.
		[ -f "$fp.before" ] || fingerprint > "$fp.before"
		rc=0
		out=$(cd "$ws" && timeout -s KILL 30 "$TXGUARD" --no-default-policy -p "$POLICY" \
			--state-dir "$state" -w "$ws" --timeout 20s -- sh -c "$line" 2>&1 </dev/null) || rc=$?
		fingerprint > "$fp.after"
		if ! cmp -s "$fp.before" "$fp.after"; then
			leaks=$((leaks + 1))
			echo "CHANGED OUTSIDE THE WORKSPACE: $line" >&2
			diff "$fp.before" "$fp.after" | head -n 10 >&2
		fi
		mv "$fp.after" "$fp.before"
		if [ "$mode" = restore ]; then
			if [ "$rc" = 0 ]; then
				other=$((other + 1)); echo "expected a failure: $line" >&2
			elif [ "$(ws_state "$ws")" = "$ws_before" ]; then
				restored=$((restored + 1))
			else
				leaks=$((leaks + 1)); echo "workspace not restored: $line" >&2
				echo "$out" | tail -n 5 >&2
			fi
			continue
		fi
		case $out in
		*"killed"*|*"kill "*) killed=$((killed + 1)) ;;
		*denied*) denied=$((denied + 1)) ;;
		*"not found"*) absent=$((absent + 1)) ;;
		*) other=$((other + 1)); echo "no denial for: $line (rc=$rc)" >&2 ;;
		esac
		[ -f "$ws/src/main.c" ] || { leaks=$((leaks + 1)); echo "workspace not restored: $line" >&2; }
	done < "$file"
}

inside() {
	[ "${ARENA:-}" = 1 ] || { echo "corpus-arena: refusing to run outside the arena" >&2; exit 125; }
	# The arena's lower layer is the live host: the host's own activity
	# (root's shell history, other txguard runs) shows through. A home of
	# our own, made in the arena's upper layer, is quiet.
	export HOME=/srv/txguard-corpus/home
	mkdir -p "$HOME"
	[ -e "$HOME/.profile" ] || echo 'export X=1' > "$HOME/.profile"
	mkdir -p "$HOME/.ssh" && echo secret > "$HOME/.ssh/id_test"
	n=0 denied=0 killed=0 absent=0 other=0 leaks=0 restored=0
	state=/srv/txguard-corpus/state
	fp=/tmp/txguard-corpus-fp
	rm -f "$fp.before"
	mkdir -p "$state" /srv/txguard-corpus/warm
	# txguard's own first-run files must not count as the command's doing.
	(cd /srv/txguard-corpus/warm && "$TXGUARD" --state-dir "$state" -w . -- true) >/dev/null 2>&1 || true
	deep_fingerprint > /tmp/txguard-corpus-deep.before

	run_file "$CORPUS" deny
	echo "destructive corpus in the arena: $n commands, $denied denied, $killed killed, $absent not installed here, $other neither, $leaks with lasting effects"
	n0=$n d0=$denied k0=$killed
	run_file "$HERE/wrappers.txt" deny
	echo "through wrappers: $((n - n0)) commands, $((denied - d0)) denied, $((killed - k0)) killed"
	n1=$n
	run_file "$HERE/inside.txt" restore
	echo "aimed at the workspace: $((n - n1)) commands, $restored restored exactly"

	deep_fingerprint > /tmp/txguard-corpus-deep.after
	if ! cmp -s /tmp/txguard-corpus-deep.before /tmp/txguard-corpus-deep.after; then
		leaks=$((leaks + 1))
		echo "/etc, /usr/local, /boot or a home changed:" >&2
		diff /tmp/txguard-corpus-deep.before /tmp/txguard-corpus-deep.after | head -n 20 >&2
	fi
	echo "total: $n commands, $leaks with lasting effects, $other unexpected"
	[ "$leaks" = 0 ] && [ "$other" = 0 ] && [ "$n0" -ge 150 ]
}

if [ "${1:-}" = --inside ]; then
	inside
	exit $?
fi

[ -x "$TXGUARD" ] || skip "txguard binary not built"
ARENA_BIN="$TXGUARD_SOURCE_DIR/scripts/arena"
[ -x "$ARENA_BIN" ] || skip "scripts/arena missing"
tg_need_arena
exec "$ARENA_BIN" -- env TXGUARD="$TXGUARD" TXGUARD_SOURCE_DIR="$TXGUARD_SOURCE_DIR" \
	HOME="${HOME:-/root}" sh "$0" --inside
