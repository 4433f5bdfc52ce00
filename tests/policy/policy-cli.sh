#!/bin/sh
# policy-cli.sh — `txguard policy check|explain` on the built binary: exit
# codes, file:line:col diagnostics, verdicts in text and JSON.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
P="$TXGUARD_SOURCE_DIR/policy.d"

out=$("$TXGUARD" policy check --no-default-policy -p "$P" 2>&1) || fail "default policy check: $out"

cat > "$TG_TMP/bad.yaml" <<'Y'
rules:
  - id: one
    colour: red
    reason: r
    action: deny
    errno: ENOPE
    exec: {program: [rm]}
Y
rc=0; out=$("$TXGUARD" policy check --no-default-policy -p "$TG_TMP/bad.yaml" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a bad policy must fail the check"
case $out in *"bad.yaml:3:5: unknown key 'colour' in rule"*) ;; *) fail "no colour diagnostic: $out" ;; esac
case $out in *"bad.yaml:6:12: unknown errno name 'ENOPE'"*) ;; *) fail "no errno diagnostic: $out" ;; esac

cat > "$TG_TMP/ex.yaml" <<'Y'
rules:
  - id: no-ls
    reason: r
    action: deny
    exec: {program: [ls]}
    examples: {match: [cat x]}
Y
rc=0; out=$("$TXGUARD" policy check --no-default-policy -p "$TG_TMP/ex.yaml" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a failing example must fail the check"
case $out in *"ex.yaml:6:24: rule 'no-ls': example 'cat x' should match but does not"*) ;;
*) fail "no example diagnostic: $out" ;; esac

# policy explain exits 0 allow, 1 deny or kill, 2 a bad question.
out=$("$TXGUARD" policy explain --no-default-policy -p "$P" --json -- git push -f origin main) && fail "deny exits 0"
case $out in *'"verdict":"deny","errno":"EPERM","rule":"git-push-force"'*) ;; *) fail "explain json: $out" ;; esac
out=$("$TXGUARD" policy explain --no-default-policy -p "$P" -- rm -rf /) && fail "kill exits 0"
case $out in *"verdict: kill"*"rule: rm-recursive-system"*) ;; *) fail "explain text: $out" ;; esac
# The dynamic loader is a wrapper: what it runs is judged.
out=$("$TXGUARD" policy explain --no-default-policy -p "$P" -- /lib64/ld-linux-x86-64.so.2 \
	--library-path /x /bin/rm -rf /) || true
case $out in *"verdict: kill"*"rule: rm-recursive-system"*"the loader runs /bin/rm"*) ;;
*) fail "explain through ld.so: $out" ;; esac
out=$("$TXGUARD" policy explain --no-default-policy -p "$P" --json -- /lib/ld-musl-x86_64.so.1 sudo id) || true
case $out in *'"verdict":"deny"'*'"rule":"privilege-escalation"'*) ;; *) fail "explain json through ld.so: $out" ;; esac
out=$("$TXGUARD" policy explain --no-default-policy -p "$P" -p "$TG_TMP/ex.yaml" --json)
case $out in *'"id":"no-ls","kind":"exec","action":"deny"'*) ;; *) fail "dump json: $out" ;; esac
echo "policy check/explain: OK"
