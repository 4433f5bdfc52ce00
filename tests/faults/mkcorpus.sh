#!/bin/sh
# mkcorpus.sh OUTDIR — seeds for fuzz-journal from real journals: runs a few
# txguard transactions (committed, so their journals stay) on a workspace
# laid out like the fuzzer's fixture (jfixture.h), and writes each log, and
# each log + separator + pre.tar.zst, as one seed. Twice: with the state dir
# on the workspace's filesystem (hard-link stash) and on another one (every
# pre-image copied: SAVED records).
#   TXGUARD=build/cmd/txguard tests/faults/mkcorpus.sh tests/faults/fuzz-corpus
set -eu
: "${TXGUARD:?}"
out=$1
mkdir -p "$out"
tmp=$(mktemp -d /tmp/tg-mkcorpus.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'version: 1\n' >"$tmp/policy.yaml"

layout() {
	rm -rf "$1"
	mkdir -p "$1/d" "$1/e" "$tmp/outside"
	printf 'alpha\n' >"$1/a"
	ln "$1/a" "$1/b"
	printf 'gamma\n' >"$1/d/c"
	chmod 600 "$1/d/c"
	ln -s ../outside "$1/out"
	ln -s "$tmp/outside" "$1/abs"
	mkfifo "$1/fifo"
}

n=0
seeds() {
	ws=$1 st=$2 tag=$3
	for cmd in \
		'echo new >a; echo more >>d/c' \
		'rm b; rm d/c; rmdir e' \
		'mv d d2; mv a z; mv z d2/a' \
		'mkdir n; ln -s x n/l; mkfifo f2; : >new; ln a n/h' \
		'chmod 600 a; touch -d 2001-01-01 d/c; chmod 700 d' \
		'rm fifo out abs; ln -s a out' \
		'truncate -s 0 d/c; truncate -s 100000 a; head -c 3000 /dev/urandom >>a' \
		'rm -r d; mkdir d; echo x >d/c; mv e d/e' \
		'python3 -c "import os; os.setxattr(\"a\", \"user.k\", b\"v\")" 2>/dev/null; echo y >a'; do
		layout "$ws"
		rm -rf "$st"
		"$TXGUARD" -q --no-default-policy -p "$tmp/policy.yaml" -w "$ws" --state-dir "$st" -- sh -c "$cmd"
		for d in "$st"/txn/*/; do
			[ -s "$d/log" ] || continue
			n=$((n + 1))
			cp "$d/log" "$out/$tag-$n.log"
			if [ -s "$d/pre.tar.zst" ]; then
				{ cat "$d/log"; printf '\n--TGFUZZ-TAR--\n'; cat "$d/pre.tar.zst"; } >"$out/$tag-$n.logtar"
			fi
		done
	done
}

seeds "$tmp/ws" "$tmp/state" samefs
other=/dev/shm
if [ -d "$other" ] && [ "$(stat -c %d "$other")" != "$(stat -c %d "$tmp")" ]; then
	st=$(mktemp -d "$other/tg-mkcorpus.XXXXXX")
	seeds "$tmp/ws" "$st/state" crossfs
	rm -rf "$st"
fi
echo "$n journals written to $out"
