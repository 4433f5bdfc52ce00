#!/bin/sh
# learn_test.sh — `txguard learn` drafts a drop-in from a real run (issue 13):
# a C project built and installed with make, and a pip install --target
# from a local wheel (offline). Each draft, loaded with -p, lets the same
# command run with zero denials, still denies `rm -rf ~` and reading
# ~/.ssh/id_rsa, and passes `policy check`. A failed run's draft says so.
. "$(dirname "$0")/../lib/common.sh"
# Not under /tmp: the default policy makes /tmp writable.
tg_tmpdir_outside
command -v make >/dev/null && command -v cc >/dev/null || skip "needs make and cc"
H="$TG_TMP/home" WS="$TG_TMP/ws" OUT="$TG_TMP/outside"
mkdir -p "$H/.ssh" "$WS" "$OUT/prefix"
echo "PRIVATE-$$" >"$H/.ssh/id_rsa"
# -w: the build dir may lie in a git work tree (txguard's own), whose top
# would otherwise be the workspace. Every form used here takes -w after
# its subcommand words.
tgx() {
	case $1 in
	policy) _sub="$1 $2"; shift 2 ;;
	learn) _sub=$1; shift ;;
	*) _sub= ;;
	esac
	# shellcheck disable=SC2086 # $_sub is one or two words
	(cd "$WS" && HOME="$H" TXGUARD_DEFAULT_POLICY_DIR="$TXGUARD_SOURCE_DIR/policy.d" "$TXGUARD" $_sub -w "$WS" "$@")
}
ndecisions() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(len(r["decisions"]), r["outcome"])' "$1"
}
# still_safe DRAFT: the draft does not open secrets or rm -rf ~
still_safe() {
	rc=0; tgx policy explain -p "$1" -- rm -rf "$H" >/dev/null || rc=$?
	assert_eq "$1: rm -rf ~ still refused" 1 "$rc"
	rc=0; tgx policy explain -p "$1" --path "$H/.ssh/id_rsa" --op read >/dev/null || rc=$?
	assert_eq "$1: the secret still unreadable" 1 "$rc"
	rc=0; tgx -q -p "$1" -- cat "$H/.ssh/id_rsa" >"$TG_TMP/cat.out" 2>&1 || rc=$?
	[ "$rc" != 0 ] || fail "$1: cat ~/.ssh/id_rsa succeeded"
	grep -q "PRIVATE-$$" "$TG_TMP/cat.out" && fail "$1: the secret leaked"
	tgx policy check "$1" >/dev/null || fail "$1: policy check fails"
}

# --- a C build installed outside the workspace ---------------------------
cat >"$WS/hello.c" <<'EOC'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
EOC
printf 'PREFIX ?= /nowhere\nhello: hello.c\n\tcc -O2 -o hello hello.c\ninstall: hello\n\tmkdir -p $(PREFIX)/bin\n\tcp hello $(PREFIX)/bin/hello\n' >"$WS/Makefile"
rc=0; tgx -q -- make -s install PREFIX="$OUT/prefix" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "make install outside the workspace ran without a policy"
tgx learn -q -o "$TG_TMP/make.yaml" -- make -s install PREFIX="$OUT/prefix" >/dev/null 2>&1 ||
	fail "the learn run of make failed"
grep -qx "    - \"$OUT/prefix\"" "$TG_TMP/make.yaml" || fail "make draft lacks $OUT/prefix: $(cat "$TG_TMP/make.yaml")"
rm -rf "$OUT/prefix/bin" "$WS/hello"
tgx -q --report "$TG_TMP/make.json" -p "$TG_TMP/make.yaml" -- make -s install PREFIX="$OUT/prefix" >/dev/null ||
	fail "make install with the draft failed"
assert_eq "make with the draft: zero denials" "0 committed" "$(ndecisions "$TG_TMP/make.json")"
[ -x "$OUT/prefix/bin/hello" ] || fail "make install did not install"
still_safe "$TG_TMP/make.yaml"

# --- pip install --target from a local wheel (offline) --------------------
PY=$(python3 -c 'import sys; print(sys.executable)')
"$PY" -m pip --version >/dev/null 2>&1 || skip "pip is not available for $PY"
mkdir -p "$TG_TMP/wheels"
tg_make_wheel "$TG_TMP/wheels/i13demo-1.0-py3-none-any.whl" i13demo 42
PIP="$PY -m pip install -q --no-index --disable-pip-version-check --find-links $TG_TMP/wheels --target $OUT/site i13demo"
mkdir -p "$OUT/site"
# shellcheck disable=SC2086
tgx learn -q -o "$TG_TMP/pip.yaml" -- $PIP >"$TG_TMP/pip.learn" 2>&1 || fail "the learn run of pip failed: $(cat "$TG_TMP/pip.learn")"
[ -e "$OUT/site/i13demo/__init__.py" ] || fail "pip did not install during learn"
rm -rf "$OUT/site" && mkdir -p "$OUT/site"
# shellcheck disable=SC2086
tgx -q --report "$TG_TMP/pip.json" -p "$TG_TMP/pip.yaml" -- $PIP || fail "pip with the draft failed"
assert_eq "pip with the draft: zero denials" "0 committed" "$(ndecisions "$TG_TMP/pip.json")"
[ "$(cd "$OUT/site" && "$PY" -c 'import i13demo; print(i13demo.VALUE)')" = 42 ] || fail "the installed package does not import"
still_safe "$TG_TMP/pip.yaml"

# --- a failed learn run still drafts, marked ---------------------------------
rc=0; tgx learn -q -o "$TG_TMP/fail.yaml" -- sh -c "mkdir -p '$OUT/prefix/x'; exit 3" || rc=$?
assert_eq "failed learn run: exit" 3 "$rc"
grep -q "^# THE RUN FAILED (exit 3)" "$TG_TMP/fail.yaml" || fail "the failed draft is not marked"
tgx policy check "$TG_TMP/fail.yaml" >/dev/null || fail "the failed draft does not check"
echo ok
