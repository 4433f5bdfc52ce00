#!/bin/sh
# corpus-arena.sh — run every line of destructive.txt for real, as
# `txguard -- sh -c LINE`, inside the throwaway arena (scripts/arena), and
# check that nothing outside the workspace changed. Also counts how each run
# ended (denied/killed/other) so that the report can quote the figures.
#
# Never run the inside half on a real machine: it only runs when the arena
# says it is one ($ARENA = 1).
. "$(dirname "$0")/../lib/common.sh"

CORPUS="$TXGUARD_SOURCE_DIR/tests/policy/destructive.txt"
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

# Around each run: the top levels.
fingerprint() {
	for d in / /etc /usr /usr/bin /usr/lib /usr/local /usr/share /var /var/lib /var/log \
		/home /root /opt /srv /boot /dev "$HOME" "$HOME/.ssh"; do
		[ -e "$d" ] && list_entries "$d" -maxdepth 1 -mindepth 1
	done
	sha256sum /etc/passwd /etc/hosts "$HOME/.profile" "$HOME/.ssh/id_test" 2>/dev/null
}

# Once before and once after: everything under /etc, /usr/local, /boot and
# the homes but the caches (writable places may change: that is their job).
deep_fingerprint() {
	list_entries /etc /usr/local /boot /root "$HOME" \( -path /root/.cache -o -path /root/.local \
		-o -path "$HOME/.cache" -o -path "$HOME/.npm" \) -prune -o
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
	n=0 denied=0 killed=0 absent=0 other=0 leaks=0
	state=/srv/txguard-corpus/state
	mkdir -p "$state" /srv/txguard-corpus/warm
	# txguard's own first-run files must not count as the command's doing.
	(cd /srv/txguard-corpus/warm && "$TXGUARD" --state-dir "$state" -w . -- true) >/dev/null 2>&1 || true
	deep_fingerprint > "/tmp/txguard-corpus-deep.before"
	fp=/tmp/txguard-corpus-fp
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		n=$((n + 1))
		ws=/srv/txguard-corpus/ws$n
		mkdir -p "$ws/src" && echo 'int main(void){return 0;}' > "$ws/src/main.c"
		fingerprint > "$fp.before"
		rc=0
		out=$(cd "$ws" && timeout -s KILL 30 "$TXGUARD" --no-default-policy -p "$POLICY" \
			--state-dir "$state" -w "$ws" --timeout 20s -- sh -c "$line" 2>&1 </dev/null) || rc=$?
		fingerprint > "$fp.after"
		case $out in
		*"killed"*|*"kill "*) killed=$((killed + 1)) ;;
		*denied*) denied=$((denied + 1)) ;;
		*"not found"*) absent=$((absent + 1)) ;;
		*) other=$((other + 1)); echo "no denial for: $line (rc=$rc)" >&2 ;;
		esac
		if ! cmp -s "$fp.before" "$fp.after"; then
			leaks=$((leaks + 1))
			echo "CHANGED OUTSIDE THE WORKSPACE: $line" >&2
			diff "$fp.before" "$fp.after" | head -n 10 >&2
		fi
		[ -f "$ws/src/main.c" ] || { leaks=$((leaks + 1)); echo "workspace not restored: $line" >&2; }
	done < "$CORPUS"
	deep_fingerprint > /tmp/txguard-corpus-deep.after
	if ! cmp -s /tmp/txguard-corpus-deep.before /tmp/txguard-corpus-deep.after; then
		leaks=$((leaks + 1))
		echo "/etc, /usr/local, /boot or HOME changed:" >&2
		diff /tmp/txguard-corpus-deep.before /tmp/txguard-corpus-deep.after | head -n 20 >&2
	fi
	echo "destructive corpus in the arena: $n commands, $denied denied, $killed killed, $absent not installed here, $other neither, $leaks with lasting effects"
	[ "$leaks" = 0 ] && [ "$other" = 0 ] && [ "$n" -ge 150 ]
}

if [ "${1:-}" = --inside ]; then
	inside
	exit $?
fi

[ -x "$TXGUARD" ] || skip "txguard binary not built"
ARENA_BIN="$TXGUARD_SOURCE_DIR/scripts/arena"
[ -x "$ARENA_BIN" ] || skip "scripts/arena missing"
rc=0; "$ARENA_BIN" true 2>/dev/null || rc=$?
[ "$rc" != 77 ] || skip "this machine cannot build an arena"
[ "$rc" = 0 ] || fail "arena does not work (exit $rc)"
exec "$ARENA_BIN" -- env TXGUARD="$TXGUARD" TXGUARD_SOURCE_DIR="$TXGUARD_SOURCE_DIR" \
	HOME="${HOME:-/root}" sh "$0" --inside
