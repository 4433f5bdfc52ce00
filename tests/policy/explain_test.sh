#!/bin/sh
# explain_test.sh — `txguard policy explain` answers every kind of question
# (issue 13): an exec line, a path operation, a connection; exit 0 allow,
# 1 deny or kill, 2 bad input; --json validates against
# docs/schema/explain.schema.json.
. "$(dirname "$0")/../lib/common.sh"
# $HOME outside /tmp, which the default policy makes writable. The build
# dir may lie in a git work tree (txguard's own), whose top would be the
# default workspace: -w names the test's own.
tg_tmpdir_outside
H="$TG_TMP/home"
mkdir -p "$H/.ssh" "$H/.cache" "$TG_TMP/ws"
echo k >"$H/.ssh/id_rsa"
cat >"$TG_TMP/net.yaml" <<'Y'
version: 1
network:
  default: deny
rules:
  - id: web
    reason: r
    action: allow
    connect: {cidr: [10.0.0.0/8], ports: [443]}
Y
ex() { (cd "$TG_TMP/ws" && HOME="$H" TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d" \
	"$TXGUARD" policy explain -w "$TG_TMP/ws" "$@"); }
# q EXPECTED_RC FIELD... -- ARGS: run, check the exit status and that each
# FIELD (a "key":"value" fragment) is in the JSON answer, validate it.
n=0
q() {
	want=$1; shift
	frags=""
	while [ "$1" != "--" ]; do frags="$frags
$1"; shift; done
	shift
	n=$((n + 1))
	rc=0
	ex --json "$@" >"$TG_TMP/a$n.json" 2>"$TG_TMP/a$n.err" || rc=$?
	assert_eq "explain $* (exit)" "$want" "$rc"
	echo "$frags" | while IFS= read -r f; do
		[ -z "$f" ] || grep -qF -- "$f" "$TG_TMP/a$n.json" || fail "explain $*: no $f in $(cat "$TG_TMP/a$n.json")"
	done
	if [ "$want" != 2 ]; then
		echo "$TG_TMP/a$n.json" >>"$TG_TMP/answers"
	else
		[ ! -s "$TG_TMP/a$n.json" ] || fail "explain $*: output on a bad question"
		[ -s "$TG_TMP/a$n.err" ] || fail "explain $*: no message on a bad question"
	fi
}

# exec lines
q 0 '"verdict":"allow"' -- -- ls -l
q 1 '"rule":"git-push-force"' -- -- git push --force origin main
q 1 '"verdict":"kill"' '"rule":"rm-recursive-system"' -- -- rm -rf /
# one word with blanks is split as a shell would: the same verdict
q 1 '"argv":["git","push","--force","origin","main"]' '"rule":"git-push-force"' -- -- "git push --force 'origin' main"
q 2 -- -- "rm -rf /tmp/x; ls"
q 2 -- -- "git push 'unterminated"

# path operations, each --op, each layer
# An existing secret: as root (fanotify permission events) a run marks it
# and reports the refusal (EPERM); otherwise Landlock refuses it unseen.
if "$TXGUARD" doctor --json 2>/dev/null | grep -q '"fanotify_perm":true'; then
	secret='"enforced_by":"fanotify"' serr='"errno":"EPERM"'
else
	secret='"enforced_by":"landlock"' serr='"errno":"EACCES"'
fi
q 1 '"rule":"deny-read"' "$secret" "$serr" '"op":"read"' -- --path "$H/.ssh/id_rsa" --op read
q 1 '"rule":"deny-read"' "$secret" "$serr" -- --path "~/.ssh/id_rsa" --op exec
# A missing one has nothing to mark: Landlock's, as ever.
q 1 '"rule":"deny-read"' '"enforced_by":"landlock"' -- --path "$H/.ssh/id_ed25519" --op read
q 1 '"rule":"read-only-outside-workspace"' '"enforced_by":"tracer"' -- --path "$H/.bashrc" --op write
q 1 '"rule":"read-only-outside-workspace"' -- --path /etc/passwd --op unlink
q 0 '"verdict":"allow"' "\"path\":\"$TG_TMP/ws/build/x.o\"" -- --path build/x.o --op write
q 0 '"verdict":"allow"' -- --path "$H/.cache/tool/x" --op write
q 0 '"verdict":"allow"' -- --path /usr/bin/ls --op exec
q 0 '"verdict":"allow"' -- --path /etc/hostname --op read
if "$TXGUARD" doctor 2>/dev/null | grep -qE "^Landlock: *ABI [1-9]"; then
	# writable in the policy, missing: only Landlock refuses it
	q 1 '"rule":"landlock-new-place"' '"enforced_by":"landlock"' -- --path "$H/.sqlite_history" --op write
fi
q 2 -- --path x --op frob
q 2 -- --op read
q 2 -- --path x -- ls

# connections
q 0 '"rule":"loopback"' '"address":"127.0.0.1:8080"' -- --connect 127.0.0.1:8080
q 0 '"op":"send"' -- --connect '[::1]:53' --udp
q 0 '"rule":"web"' -- -p "$TG_TMP/net.yaml" --connect 10.1.2.3:443
q 1 '"rule":"network-default-deny"' '"errno":"EACCES"' -- -p "$TG_TMP/net.yaml" --connect 10.1.2.3:80
q 1 '"rule":"network-default-deny"' '"op":"send"' -- -p "$TG_TMP/net.yaml" --connect 192.0.2.1:53 --udp
q 2 -- --connect example.com:443
q 2 -- --connect 1.2.3.4
q 2 -- --connect 1.2.3.4:99999
q 2 -- --udp
q 2 -- --bogus-option
# host names: judged by network: hosts: rules (the proxy), refused without
cat >"$TG_TMP/hosts.yaml" <<'Y'
network:
  hosts:
    allow: [pypi.org, "*.pythonhosted.org", "github.com:443"]
    deny: [evil.pypi.org]
Y
q 0 '"address":"pypi.org:443"' '"enforced_by":"proxy"' '"rule":"network-hosts-allow"' -- -p "$TG_TMP/hosts.yaml" --connect pypi.org:443
q 0 '"rule":"network-hosts-allow"' -- -p "$TG_TMP/hosts.yaml" --connect files.pythonhosted.org:443
q 1 '"rule":"network-hosts-default-deny"' -- -p "$TG_TMP/hosts.yaml" --connect github.com:22
q 1 '"rule":"network-hosts-deny"' -- -p "$TG_TMP/hosts.yaml" --connect evil.pypi.org:443
q 1 '"rule":"network-hosts-default-deny"' -- -p "$TG_TMP/hosts.yaml" --connect example.com:443
# with host rules, a direct connect to an address goes nowhere but the proxy
q 1 '"rule":"network-hosts-proxy"' -- -p "$TG_TMP/hosts.yaml" --connect 192.0.2.7:443
# a signal to a process that runs already (never of the tree): refused
sleep 300 &
victim=$!
q 1 '"rule":"signal-outside-tree"' '"comm":"sleep"' '"signal":9' '"errno":"EPERM"' -- --signal "$victim"
q 1 '"signal":15' -- --signal "$victim:15"
cat >"$TG_TMP/proc.yaml" <<'Y'
version: 1
rules:
  - id: may-signal-sleep
    reason: the job restarts its own sleeper
    action: allow
    process: {program: [sleep]}
Y
q 0 '"verdict":"allow"' -- -p "$TG_TMP/proc.yaml" --signal "$victim"
# by cgroup: the sleeper's own (the unified "0::" line, else systemd's v1
# one, as txguard reads it), glob characters escaped, quotes doubled for YAML
cg=$(sed -n 's/^0:://p' "/proc/$victim/cgroup")
[ -n "$cg" ] || cg=$(sed -n 's/^[0-9]*:name=systemd://p' "/proc/$victim/cgroup")
if [ -n "$cg" ] && [ "$(printf '%s\n' "$cg" | wc -l)" = 1 ]; then
	pat=$(printf '%s' "$cg" | sed -e 's/[][*?\\]/\\&/g' -e "s/'/''/g")
	for c in "'$pat'" "'/txguard-no-such.slice/**'"; do
		cat >"$TG_TMP/cg.yaml" <<Y
version: 1
rules:
  - id: may-signal-cgroup
    reason: the job restarts what runs in this cgroup
    action: allow
    process: {cgroup: [$c]}
Y
		if [ "$c" = "'$pat'" ]; then
			q 0 '"verdict":"allow"' '"rule":"may-signal-cgroup"' -- -p "$TG_TMP/cg.yaml" --signal "$victim"
		else
			q 1 '"rule":"signal-outside-tree"' -- -p "$TG_TMP/cg.yaml" --signal "$victim"
		fi
	done
else
	echo "note: /proc/$victim/cgroup shows no cgroup path; the cgroup questions were not asked"
fi
kill "$victim"
q 2 -- --signal abc
q 2 -- --signal 12:x
q 2 -- --signal 1 --connect 1.2.3.4:5
# every answer against the schema, in one python run
rc=0
xargs python3 "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" explain <"$TG_TMP/answers" >/dev/null || rc=$?
[ "$rc" = 77 ] && skip "python3-jsonschema is missing: the answers were not validated"
[ "$rc" = 0 ] || fail "an answer does not validate against explain.schema.json"
echo "explain: $n questions OK"
