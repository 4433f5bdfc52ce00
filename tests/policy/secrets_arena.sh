#!/bin/sh
# secrets_arena.sh — the system's secrets stay unreadable under txguard, as
# root (issue 14). Inside the throwaway arena each secret file is first
# REPLACED by a fake carrying a marker (the writes land in the arena's
# memory, never on the host, and the host's real secrets are never read),
# then read under txguard through cat, base64, dd, python3 open(), tar -c
# and cp into the workspace: no marker may come out, and no copy may hold
# it. A process started outside txguard keeps its environment to itself.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the arena needs root"
tg_need_arena
"$TXGUARD" doctor 2>&1 | grep -qE "^Landlock: +ABI [1-9]" ||
	skip_kernel "no Landlock on this kernel: deny_read cannot be enforced (txguard refuses to run)"

out=$("$TXGUARD_SOURCE_DIR/scripts/arena" -- sh -c '
	set -u
	SECRETS="/etc/shadow /etc/gshadow /etc/ssh/ssh_host_ed25519_key /root/.ssh/id_ed25519
		/root/.aws/credentials /var/lib/cloud/instance/user-data.txt /etc/kubernetes/admin.conf
		/etc/ssl/private/server.key /run/secrets/db-password"
	for f in $SECRETS; do
		mkdir -p "$(dirname "$f")" && printf "TXGSECRET-%s\n" "$f" > "$f" || { echo "setup $f"; exit 3; }
	done
	WS=/tmp/sec-ws; mkdir -p $WS; cd $WS
	env SECRET_ENV=TXGSECRET-environ sleep 300 & outside=$!
	sleep 0.2
	n=0
	for f in $SECRETS; do
		for how in cat base64 dd python3 tar cp; do
			case $how in
			cat) cmd="cat $f" ;;
			base64) cmd="base64 $f | base64 -d" ;;
			dd) cmd="dd if=$f status=none" ;;
			python3) cmd="python3 -c \"print(open(\\\"$f\\\").read())\"" ;;
			tar) cmd="tar -cf - $f | tar -xOf -" ;;
			cp) cmd="cp $f $WS/copy && cat $WS/copy" ;;
			esac
			got=$("$TXGUARD" -q -w $WS --rollback-on never -- sh -c "$cmd" 2>/dev/null || true)
			case $got in *TXGSECRET*) echo "LEAK: $how $f" ;; esac
			if [ -e $WS/copy ]; then
				grep -q TXGSECRET $WS/copy && echo "LEAK: copy of $f"
				rm -f $WS/copy
			fi
			n=$((n + 1))
		done
	done
	# Each refusal is one decision naming the rule and the secret (as root
	# fanotify sees the open; where it cannot, Landlock refuses unseen and
	# the report lists the rule as unobserved).
	for f in $SECRETS; do
		"$TXGUARD" -q -w $WS --report /tmp/sec.json -- cat "$f" >/dev/null 2>/tmp/sec.err
		python3 -c "
import json, sys
r = json.load(open(\"/tmp/sec.json\"))
d = [(x[\"rule\"], x.get(\"path\")) for x in r[\"decisions\"]]
u = any(\"$f\" == q or \"$f\".startswith(q + \"/\") for x in r.get(\"unobserved\", []) for q in x.get(\"paths\", []))
print(\"one-decision\" if d == [(\"deny-read\", \"$f\")] else \"unobserved\" if not d and u else \"BAD-DECISIONS $f %s\" % d)
"
		n_lines=$(grep -c "^txguard: denied" /tmp/sec.err)
		[ -s /tmp/sec.json ] && [ "$n_lines" -le 1 ] || echo "BAD-LINES $f $n_lines"
	done
	"$TXGUARD" doctor --json 2>/dev/null | grep -q "\"fanotify_perm\": *true" && echo "fanotify=yes"
	got=$("$TXGUARD" -q -w $WS -- sh -c "cat /proc/$outside/environ | tr \"\\\\0\" \"\\\\n\"" 2>/dev/null || true)
	case $got in *TXGSECRET*) echo "LEAK: /proc/$outside/environ" ;; esac
	mine=$(MINE=own "$TXGUARD" -q -w $WS -- sh -c "cat /proc/self/environ | tr \"\\\\0\" \"\\\\n\" | grep ^MINE=")
	echo "own-environ=$mine"
	# The files really hold the marker: the checks above could see it.
	grep -q TXGSECRET /etc/shadow && echo "control-readable"
	tr "\\0" "\\n" < /proc/$outside/environ | grep -q TXGSECRET-environ && echo "control-environ"
	kill $outside
	echo "reads=$n"
' 2>&1) || true
echo "$out"
echo "$out" | grep -q "^LEAK" && fail "a secret was read under txguard"
echo "$out" | grep -qx "control-readable" || fail "the fake secrets were not in place"
echo "$out" | grep -qx "control-environ" || fail "the outside environment was not readable outside txguard"
echo "$out" | grep -qx "own-environ=MINE=own" || fail "the tree lost its own /proc/self/environ"
echo "$out" | grep -qx "reads=54" || fail "not every read was tried"
echo "$out" | grep -q "^BAD-" && fail "a refused read was not exactly one decision: $(echo "$out" | grep "^BAD-")"
# With fanotify permission events every one is seen; without (the arena
# drops CAP_SYS_ADMIN) every one is listed as unobserved, the file or a
# directory above it.
n_seen=$(echo "$out" | grep -cx "one-decision" || true)
n_unseen=$(echo "$out" | grep -cx "unobserved" || true)
if echo "$out" | grep -qx "fanotify=yes"; then
	assert_eq "secrets seen one by one" 9 "$n_seen"
else
	assert_eq "secrets listed as unobserved" 9 "$n_unseen"
fi
exit 0
