#!/bin/sh
# integration.sh CASE: real tools as mutators through the txguard binary,
# each failed on purpose and restored exactly (the tg-treehash manifest,
# mtimes included, equals the one before); plus the journal's visibility
# (zstd | tar lists the pre-images; git status never shows it).
. "${TXGUARD_SOURCE_DIR:?}/tests/lib/common.sh"
: "${TG_TREEHASH:?}"
case_=${1:?case}
tg_tmpdir
ws=$TG_TMP/ws
st=$TG_TMP/state
mkdir -p "$ws"

tg() {
	"$TXGUARD" --no-default-policy -q --state-dir "$st" -w "$ws" "$@"
}

# failed_run SCRIPT: runs it under txguard (it must exit non-zero) and
# checks the workspace is back byte for byte.
failed_run() {
	"$TG_TREEHASH" "$ws" >"$TG_TMP/before"
	set +e
	(cd "$ws" && tg -- sh -c "$1")
	rc=$?
	set -e
	[ "$rc" != 0 ] || fail "$case_: the command was meant to fail"
	[ "$rc" != 125 ] || fail "$case_: txguard itself failed (125)"
	"$TG_TREEHASH" "$ws" >"$TG_TMP/after"
	if ! cmp -s "$TG_TMP/before" "$TG_TMP/after"; then
		diff "$TG_TMP/before" "$TG_TMP/after" | head -20 >&2
		fail "$case_: workspace not restored"
	fi
	[ -z "$(ls "$st/txn" 2>/dev/null)" ] || fail "$case_: journal left after rollback"
}

git_repo() {
	cd "$ws"
	git init -q -b main .
	git config user.email t@example.com
	git config user.name t
	mkdir -p src/lib docs
	for i in $(seq 1 40); do echo "main $i" >"src/f$i.c"; done
	echo "lib" >src/lib/a.h
	printf 'x\n' >docs/readme
	ln -s src/f1.c link
	git add -A
	git commit -q -m main
	git checkout -q -b other
	rm -rf docs
	for i in $(seq 1 40); do echo "other $i" >"src/f$i.c"; done
	mkdir -p newdir/deep
	echo n >newdir/deep/n
	chmod +x src/f2.c
	git add -A
	git commit -q -m other
	git checkout -q main
	cd - >/dev/null
}

case $case_ in
git_checkout)
	git_repo
	failed_run 'git checkout -q other && test -f newdir/deep/n && exit 3'
	;;
git_clean)
	git_repo
	mkdir -p "$ws/build/obj" "$ws/node_modules/pkg"
	for i in $(seq 1 50); do echo "$i" >"$ws/build/obj/o$i"; done
	echo "module" >"$ws/node_modules/pkg/index.js"
	echo "untracked" >"$ws/notes.txt"
	printf 'build/\nnode_modules/\n' >"$ws/.gitignore"
	failed_run 'git clean -fdxq && test ! -e build && exit 1'
	;;
sed_many)
	mkdir -p "$ws/s"
	for i in $(seq 1 300); do printf 'foo %s\nbar\n' "$i" >"$ws/s/file $i.txt"; done
	failed_run 'sed -i s/foo/baz/ s/*.txt && grep -q baz "s/file 7.txt" && exit 1'
	;;
rm_rf)
	mkdir -p "$ws/tree"
	for d in $(seq 1 20); do
		mkdir -p "$ws/tree/d$d/sub"
		for f in $(seq 1 50); do echo "$d $f" >"$ws/tree/d$d/f$f"; done
		echo deep >"$ws/tree/d$d/sub/deep"
		ln -s "f1" "$ws/tree/d$d/ln"
	done
	ln "$ws/tree/d1/f1" "$ws/hardlink-outside-tree"
	mkfifo "$ws/tree/fifo"
	failed_run 'rm -rf tree && test ! -e tree && exit 1'
	;;
tar_x)
	mkdir -p "$ws/p/q" "$TG_TMP/src/p/q"
	for i in $(seq 1 30); do echo "old $i" >"$ws/p/q/f$i"; echo "new $i" >"$TG_TMP/src/p/q/f$i"; done
	echo "extra" >"$TG_TMP/src/p/extra"
	chmod 600 "$ws/p/q/f3"
	tar -C "$TG_TMP/src" -cf "$TG_TMP/t.tar" p
	failed_run "tar -xf '$TG_TMP/t.tar' && grep -q new p/q/f1 && exit 2"
	;;
make_build)
	mkdir -p "$ws/proj"
	for i in 1 2 3; do printf 'int f%s(void) { return %s; }\n' "$i" "$i" >"$ws/proj/f$i.c"; done
	printf 'int f1(void); int f2(void); int f3(void);\nint main(void) { return f1() + f2() + f3() - 6; }\n' >"$ws/proj/main.c"
	printf 'app: main.o f1.o f2.o f3.o\n\tcc -o $@ $^\n%%.o: %%.c\n\tcc -c -o $@ $<\n' >"$ws/proj/Makefile"
	# the compiler's temp files go inside the workspace: the run may not
	# write outside it
	mkdir "$ws/proj/tmp"
	failed_run 'TMPDIR=$PWD/proj/tmp make -s -C proj >/dev/null && ./proj/app && test -f proj/f2.o && exit 1'
	;;
commit_keeps_effects)
	mkdir -p "$ws/a" && echo one >"$ws/a/x" && echo two >"$ws/b"
	cp -a "$ws" "$TG_TMP/ref"
	script='echo more >>a/x; mv b c; mkdir d; echo new >d/n; chmod 600 a/x; rm -f gone'
	(cd "$TG_TMP/ref" && sh -c "$script")
	(cd "$ws" && tg -- sh -c "$script") || fail "successful run failed"
	"$TG_TREEHASH" "$ws" --no-mtime >"$TG_TMP/a"
	"$TG_TREEHASH" "$TG_TMP/ref" --no-mtime >"$TG_TMP/b"
	cmp -s "$TG_TMP/a" "$TG_TMP/b" || { diff "$TG_TMP/b" "$TG_TMP/a" >&2; fail "commit changed the effects"; }
	[ "$(ls "$st/txn" | wc -l)" = 1 ] || fail "the committed journal is not kept as history"
	;;
zstd_lists_preimages)
	mkdir -p "$ws/dir with space"
	echo "pre-image one" >"$ws/dir with space/one"
	echo "pre-image two" >"$ws/two"
	(cd "$ws" && tg -- sh -c 'echo x >"dir with space/one"; : >two') || fail "run failed"
	list=$(zstd -dc "$st"/txn/*/pre.tar.zst | tar -tv)
	echo "$list" | grep -q 'dir with space/one$' || fail "tar -tv does not list the pre-image: $list"
	echo "$list" | grep -q ' two$' || fail "tar -tv does not list two: $list"
	dir=$(mktemp -d "$TG_TMP/x.XXXXXX")
	zstd -dc "$st"/txn/*/pre.tar.zst | tar -C "$dir" -x
	assert_eq "extracted pre-image" "pre-image one" "$(cat "$dir/dir with space/one")"
	;;
git_status_clean)
	# State dir on another filesystem than the workspace: the .txguard
	# fallback lives inside it, and git must not see it.
	git_repo
	unset TXGUARD_STATE_DIR
	export XDG_STATE_HOME=/proc/no-such-dir
	(cd "$ws" && "$TXGUARD" --no-default-policy -q -- sh -c 'echo x >src/f1.c; exit 1') && fail "meant to fail"
	[ -f "$ws/.txguard/.gitignore" ] || fail "no .txguard fallback in the workspace"
	inside=$(cd "$ws" && "$TXGUARD" --no-default-policy -q -- git status --porcelain) || fail "run failed"
	out=$(cd "$ws" && git status --porcelain)
	assert_eq "git status after txguard runs" "" "$out"
	assert_eq "git status seen by the traced command" "" "$inside"
	;;
mutate_under_txguard)
	# tg-mutate's random ops through the real tracer (not the in-process
	# hook): every kind of call, colliding names, long and odd names.
	: "${TG_MUTATE:?}"
	for seed in $(seq 1 ${TG_IT_SEEDS:-12}); do
		rm -rf "$ws" && mkdir -p "$ws"
		"$TG_MUTATE" "$((seed + 500000))" 120 "$ws"
		failed_run "'$TG_MUTATE' $seed 60 . && exit 1"
	done
	;;
crash_txguard)
	# SIGKILL txguard itself at a random moment of a run, then
	# `txguard recover`: the workspace must be as before the run.
	: "${TG_MUTATE:?}"
	# Is some process still working in the workspace (its cwd there)?
	cwd_in_ws_alive() {
		real=$(cd "$ws" && pwd -P)
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/cwd" 2>/dev/null)" = "$real" ] && return 0
		done
		return 1
	}
	kills=0
	for seed in $(seq 1 ${TG_IT_SEEDS:-8}); do
		rm -rf "$ws" "$st" && mkdir -p "$ws"
		"$TG_MUTATE" "$((seed + 700000))" 150 "$ws"
		"$TG_TREEHASH" "$ws" >"$TG_TMP/before"
		# 6000 mutations take ~0.5 s here: the kill at 0-0.3 s lands mid-run.
		(cd "$ws" && exec "$TXGUARD" --no-default-policy -q --state-dir "$st" -- "$TG_MUTATE" "$seed" 6000 .) &
		pid=$!
		sleep "0.$((seed * 37 % 3))$((seed * 11 % 10))"
		if ! kill -9 "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null || true
			continue # the run ended first (and committed): nothing to recover
		fi
		kills=$((kills + 1))
		wait "$pid" 2>/dev/null || true
		# The tracee dies with its tracer (PTRACE_O_EXITKILL), but under
		# load it may take a while to be gone: wait until no process has
		# its cwd in the workspace (bounded), or recover races a dying one.
		n=0
		while [ $n -lt 100 ] && cwd_in_ws_alive; do
			sleep 0.05
			n=$((n + 1))
		done
		# The kill can land after the commit, while txguard is exiting:
		# then there is nothing to recover and the run's effects stay.
		if "$TXGUARD" log -w "$ws" --state-dir "$st" --json | grep -q '"outcome":"committed"'; then
			kills=$((kills - 1))
			continue
		fi
		"$TXGUARD" recover -w "$ws" --state-dir "$st" >"$TG_TMP/recover.out" 2>&1 ||
			{ cat "$TG_TMP/recover.out" >&2; fail "recover failed (seed $seed)"; }
		"$TG_TREEHASH" "$ws" >"$TG_TMP/after"
		if ! cmp -s "$TG_TMP/before" "$TG_TMP/after"; then
			diff "$TG_TMP/before" "$TG_TMP/after" | head -10 >&2
			fail "seed $seed: not restored after a killed txguard"
		fi
	done
	[ "$kills" -gt 0 ] || fail "no run was killed mid-flight: make the runs longer"
	echo "killed $kills runs"
	;;
*)
	fail "unknown case $case_"
	;;
esac
echo "ok: $case_"
