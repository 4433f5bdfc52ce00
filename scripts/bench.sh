#!/bin/bash
# bench.sh — txguard's overhead against native, measured in one run (not a test).
#
# Usage: scripts/bench.sh [--quick] [--only NAME[,NAME...]] [--reps N]
#   NAME: build | forkexec | trapcost | txn | rmrf | bigfile | reflink | memory
#         | start | argv | session | bigchange
#         (journal = txn,rmrf,bigfile,reflink,memory; agent = start,argv,session,bigchange)
#   --quick   smaller workloads, fewer repetitions (~3 minutes)
#   --reps N  repetitions of each timed variant (default 3, quick 2; the quick build: 1)
#
# Environment:
#   TXGUARD       the binary (default: build/cmd/txguard of this tree)
#   BENCH_CACHE   where the big fixtures live, kept between runs (default /var/tmp/txguard-bench)
#   BENCH_RUN     where one run's workspaces and journals go, removed at the end
#                 (default: under BENCH_CACHE); e.g. a tmpfs, to time txguard apart
#                 from a disk's own variance (docs/benchmarks.md)
#   BENCH_VERBOSE=1  show the workloads' output
#
# Every ratio is against native timings taken in the same run, variants interleaved
# round-robin so that a burst of load on this shared machine hits all of them alike.
# Each figure is the median (and min) of the repetitions. See docs/benchmarks.md.
set -u
export LC_ALL=C

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
. "$HERE/bench/common.sh"

QUICK=0
ONLY=build,forkexec,trapcost,txn,rmrf,bigfile,reflink,memory,start,argv,session,bigchange
REPS=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--only) ONLY=${2:?--only NAME}; shift ;;
	--only=*) ONLY=${1#--only=} ;;
	--reps) REPS=${2:?--reps N}; shift ;;
	-h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
ONLY=${ONLY//journal/txn,rmrf,bigfile,reflink,memory}
ONLY=${ONLY//agent/start,argv,session,bigchange}
want() { case ",$ONLY," in *,"$1",*) return 0 ;; esac; return 1; }

if [ "$QUICK" = 1 ]; then
	REPS=${REPS:-2}
	TREE_FILES=10000 TREE_BYTES=$((150 * 1000 * 1000))
	RM_FILES=3000 BIG_MIB=128 LOOP_N=300 TRAP_N=3000
	START_REPS=${START_REPS:-20} ARGV_N=30000 SESSION_N=60 SMALL_FILES=5000
else
	REPS=${REPS:-3}
	TREE_FILES=100000 TREE_BYTES=$((1500 * 1000 * 1000))
	RM_FILES=30000 BIG_MIB=1024 LOOP_N=2000 TRAP_N=20000
	START_REPS=${START_REPS:-50} ARGV_N=100000 SESSION_N=200 SMALL_FILES=20000
fi

TXGUARD=${TXGUARD:-$REPO/build/cmd/txguard}
mkdir -p "$BENCH_CACHE" || die "cannot create $BENCH_CACHE"
BENCH_RUN=${BENCH_RUN:-$BENCH_CACHE}
mkdir -p "$BENCH_RUN" || die "cannot create $BENCH_RUN"
RUN=$(mktemp -d "$BENCH_RUN/run.XXXXXX")
cleanup_run() { rm -rf "$RUN"; }
trap 'cleanup_run' EXIT
trap 'exit 130' INT TERM

# The trap set (docs/tracer.md), for strace's --seccomp-bpf: strace cannot look at open
# flags in BPF, so it gets the set twice: with every open, and with no open at all.
TRAPSET=execve,execveat,unlink,unlinkat,rmdir,rename,renameat,renameat2,link,linkat,symlink,symlinkat,mkdir,mkdirat,mknod,mknodat,truncate,chmod,fchmod,fchmodat,chown,lchown,fchown,fchownat,utime,utimes,utimensat,futimesat,setxattr,lsetxattr,fsetxattr,removexattr,lremovexattr,fremovexattr,connect,openat2
STRACE_FULL=(strace -f -qq -o /dev/null)
STRACE_OPENS=(strace -f -qq -o /dev/null --seccomp-bpf -e "trace=$TRAPSET,open,openat,creat")
STRACE_MUT=(strace -f -qq -o /dev/null --seccomp-bpf -e "trace=$TRAPSET")

# tg WS CMD...: CMD under txguard on workspace WS with a fresh state dir on the same
# filesystem (the journal's hard-link stash needs that). The shipped policy.d of this
# tree is used, so the figures are for the default policy.
TG_OK=0
tg() {
	local ws=$1 st
	shift
	st=$(mktemp -d "${TG_STATE_PARENT:-$RUN}/state.XXXXXX")
	"$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$st" -w "$ws" -- "$@"
	local rc=$?
	rm -rf "$st"
	return $rc
}

check_txguard() {
	local ws="$RUN/probe"
	mkdir -p "$ws"
	if [ -x "$TXGUARD" ] && (cd "$ws" && tg "$ws" true) >/dev/null 2>&1; then
		TG_OK=1
	else
		say "bench: '$TXGUARD -- true' does not work here: txguard rows are skipped"
		(cd "$ws" && tg "$ws" true) 2>&1 | head -5 >&2
	fi
}

machine_line() {
	printf 'date %s; host %s; nproc %s; kernel %s; fs of %s: %s; load %s\n' \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$(hostname)" "$(nproc)" "$(uname -r)" \
		"$RUN" "$(findmnt -no FSTYPE -T "$RUN")" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
	printf 'txguard %s (%s); strace %s; reps %s%s\n' "$TXGUARD" \
		"$([ "$TG_OK" = 1 ] && "$TXGUARD" --version 2>/dev/null | head -1 || echo 'not working')" \
		"$(strace -V | head -1 | awk '{print $NF}')" "$REPS" "$([ "$QUICK" = 1 ] && echo ', --quick')"
}

need_disk() { # need_disk MiB: fail early instead of filling the disk
	local avail d
	for d in "$BENCH_CACHE" "$RUN"; do
		avail=$(df -Pm "$d" | awk 'NR == 2 { print $4 }')
		[ "$avail" -ge "$1" ] || die "need ${1} MiB free under $d, have ${avail} MiB (df -h $d)"
	done
}

# bench_variants SECTION PREPARE_FN RUN_FN VARIANT...: REPS rounds, each running every
# variant once (PREPARE untimed, RUN timed), then one row per variant with its ratio
# to the first variant (native).
bench_variants() {
	local section=$1 prep=$2 run=$3 v r t
	shift 3
	declare -A samples=()
	for ((r = 1; r <= REPS; r++)); do
		for v in "$@"; do
			"$prep" "$v" || die "$section: prepare $v failed"
			if ! timed t "$run" "$v"; then
				say "bench: $section/$v failed in round $r"
				samples[$v]+=" nan"
				continue
			fi
			samples[$v]+=" $t"
		done
	done
	local base base_min m mn note=${BV_NOTE:-}
	read -r base base_min < <(stats "${samples[$1]}")
	for v in "$@"; do
		read -r m mn < <(stats "${samples[$v]}")
		case ${samples[$v]} in *nan*) note+="${note:+; }some rounds failed" ;; esac
		row "$section" "$v" "$m" "$mn" "$(ratio "$m" "$base")" "$(ratio "$mn" "$base_min")" "$note"
		note=
	done
}

# cell SECTION VARIANT [COLUMN]: a figure already in the table (default: the median).
cell() {
	printf '%s\n' "${TABLE[@]}" | awk -F'\t' -v s="$1" -v v="$2" -v c="${3:-3}" \
		'$1 == s && $2 == v { print $c; exit }'
}

variants() { # the list for a section: native, txguard (when it works), then extra ones
	local out=native
	[ "$TG_OK" = 1 ] && out+=" txguard"
	echo "$out $*"
}

run_under() { # run_under VARIANT WS CMD...
	local v=$1 ws=$2
	shift 2
	case $v in
	native) "$@" ;;
	txguard) tg "$ws" "$@" ;;
	strace-full) "${STRACE_FULL[@]}" "$@" ;;
	strace-opens) "${STRACE_OPENS[@]}" "$@" ;;
	strace-mut) "${STRACE_MUT[@]}" "$@" ;;
	*) die "unknown variant $v" ;;
	esac
}

# ---- (a) a real C build: Debian's zlib, configured, built and tested ----
build_prep() {
	rm -rf "$RUN/zlib"
	cp -a "$BENCH_CACHE/zlib-src" "$RUN/zlib"
}
build_run() {
	cd "$RUN/zlib" && run_under "$1" "$RUN/zlib" sh -c './configure && make -j2 && make test'
}
section_build() {
	say "== build: zlib configure && make -j2 && make test"
	"$HERE/bench/fetch-zlib.sh" "$BENCH_CACHE" || die "could not fetch zlib's source"
	# (variants prints a word list: splitting it is the point.)
	# shellcheck disable=SC2046
	if [ "$QUICK" = 1 ]; then
		# One round: the build is the slowest workload here.
		local REPS=1
		bench_variants build build_prep build_run $(variants strace-mut)
	else
		bench_variants build build_prep build_run $(variants strace-full strace-opens strace-mut)
	fi
}

# ---- (b) fork/exec-heavy shell loop ----
forkexec_prep() { mkdir -p "$RUN/fe"; }
forkexec_run() {
	cd "$RUN/fe" && run_under "$1" "$RUN/fe" sh -c \
		'i=0; while [ $i -lt "$1" ]; do /bin/true; sh -c :; i=$((i + 1)); done' sh "$LOOP_N"
}
section_forkexec() {
	say "== forkexec: $LOOP_N x (/bin/true; sh -c :)"
	# shellcheck disable=SC2046
	BV_NOTE="$((LOOP_N * 2)) execs" bench_variants forkexec forkexec_prep forkexec_run \
		$(variants strace-full strace-mut)
}

# ---- (c) the cost of one trapped syscall, timed inside the process ----
# "floor" is a do-nothing seccomp+ptrace tracer (bench/floor.c): the price of a stop on
# this kernel and hypervisor. "-pin" runs the whole tree on one CPU (taskset -c 0): on a
# VM whose idle vCPUs halt at once, waking the tracer on the other CPU costs more than
# everything txguard does at a stop, and pinning shows how much. "unotify-sync" is the
# same do-nothing supervisor built on seccomp user notifications with synchronous
# wake-ups (floor --unotify-sync, Linux 6.6): what a stop would cost without ptrace
# (left out where the kernel cannot).
section_trapcost() {
	say "== trapcost: $TRAP_N calls per mode, per-call time inside the process"
	local bin="$RUN/trapcost" ws="$RUN/tc" mode v r out
	cc -O2 -o "$bin" "$HERE/bench/trapcost.c" || die "cannot compile trapcost.c"
	cc -O2 -o "$RUN/floor" "$HERE/bench/floor.c" || die "cannot compile floor.c"
	mkdir -p "$ws"
	: >"$ws/f"
	local vs="native floor floor-pin"
	"$RUN/floor" --unotify-sync true 2>/dev/null && vs+=" unotify-sync"
	[ "$TG_OK" = 1 ] && vs+=" txguard txguard-pin"
	vs+=" strace-trap"
	for mode in chmod unlink openwr openrd getppid; do
		declare -A ns=()
		for ((r = 1; r <= REPS; r++)); do
			for v in $vs; do
				local cmd=("$bin" "$mode" "$TRAP_N" "$ws/f")
				case $v in
				native) out=$(cd "$ws" && "${cmd[@]}") ;;
				floor) out=$(cd "$ws" && "$RUN/floor" "${cmd[@]}") ;;
				floor-pin) out=$(cd "$ws" && taskset -c 0 "$RUN/floor" "${cmd[@]}") ;;
				unotify-sync) out=$(cd "$ws" && "$RUN/floor" --unotify-sync "${cmd[@]}") ;;
				txguard) out=$(cd "$ws" && tg "$ws" "${cmd[@]}") ;;
				txguard-pin) out=$(cd "$ws" && taskset -c 0 "$TXGUARD" -q --no-default-policy \
					-p "$REPO/policy.d" --state-dir "$RUN/st-pin" -w "$ws" -- "${cmd[@]}"; rm -rf "$RUN/st-pin") ;;
				strace-trap) out=$(cd "$ws" && strace -f -qq -o /dev/null --seccomp-bpf \
					-e trace=chmod,unlinkat,openat "${cmd[@]}") ;;
				esac
				ns[$v]+=" $(awk '{ print $3 }' <<<"$out")"
			done
		done
		local nat nat_min m mn note
		read -r nat nat_min < <(stats "${ns[native]}")
		for v in $vs; do
			read -r m mn < <(stats "${ns[$v]}")
			note="us per call"
			[ "$v" != native ] && note+="; minus native: $(awk -v a="$m" -v b="$nat" 'BEGIN { printf "%.2f", (a - b) / 1000 }') us"
			row trapcost "$mode/$v" "$(us "$m")" "$(us "$mn")" "$(ratio "$m" "$nat")" "$(ratio "$mn" "$nat_min")" "$note"
		done
		unset ns
	done
}
us() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1000 }'; }

# ---- (d) the journal: fixtures cached under $BENCH_CACHE ----
TREE="$BENCH_CACHE/tree-$TREE_FILES"
ensure_tree() {
	[ -d "$TREE" ] && return 0
	need_disk $((TREE_BYTES / 1000000 * 2 + 1024))
	say "bench: generating $TREE ($TREE_FILES files, $((TREE_BYTES / 1000000)) MB; cached for later runs)"
	"$PY" "$HERE/bench/mktree.py" "$TREE" "$TREE_FILES" "$TREE_BYTES" || die "mktree failed"
}

section_txn() {
	say "== txn: start+commit of 'true' on an empty workspace vs $TREE"
	ensure_tree
	mkdir -p "$RUN/empty"
	# Warm the page cache once, so the first timed variant is not the one that pays.
	tar -C "$TREE" -cf - . | cat >/dev/null
	txn_prep() { :; }
	txn_run() {
		case $1 in
		native) /bin/true ;;
		txguard-empty) cd "$RUN/empty" && tg "$RUN/empty" /bin/true ;;
		txguard-tree) cd "$TREE" && tg "$TREE" /bin/true ;;
		esac
	}
	local vs="native"
	[ "$TG_OK" = 1 ] && vs+=" txguard-empty txguard-tree"
	BV_NOTE="/bin/true, no workspace" bench_variants txn txn_prep txn_run $vs
	if [ "$TG_OK" = 1 ]; then
		row txn "tree/empty" "" "" "$(ratio "$(cell txn txguard-tree)" "$(cell txn txguard-empty)")" \
			"$(ratio "$(cell txn txguard-tree 4)" "$(cell txn txguard-empty 4)")" \
			"growth with workspace size (target: ~1.0)"
	fi
	# The eager snapshot takes seconds: three rounds are enough to see it.
	local r t all=
	for ((r = 1; r <= (REPS > 3 ? 3 : REPS); r++)); do
		timed t sh -c 'tar -C "$1" -cf - . | zstd -1 -q -c >/dev/null' sh "$TREE"
		all+=" $t"
	done
	local m mn
	read -r m mn < <(stats "$all")
	row txn "tar|zstd -1 snapshot" "$m" "$mn" \
		"$([ "$TG_OK" = 1 ] && ratio "$m" "$(cell txn txguard-tree)")" "" \
		"eager copy of $TREE_FILES files (the paper's approach); ratio vs txguard-tree"
}

# rm -rf of a subtree: native, committed under txguard, failed under txguard (restored).
RMTPL="$BENCH_CACHE/sub-$RM_FILES.tpl"
# Names, types, modes and sizes of a tree, as one checksum. A directory's
# size is left out: it is the filesystem's (a block count on ext4, 20 bytes
# an entry on tmpfs), and BENCH_RUN may be another filesystem than the
# template's.
tree_sig() {
	(cd "$1" 2>/dev/null && find . \( -type d -printf '%p %y %m\n' \) -o -printf '%p %y %m %s\n' |
		sort | md5sum)
}
section_rmrf() {
	say "== rmrf: rm -rf of a $RM_FILES-file subtree; restore after a failed run"
	if [ ! -d "$RMTPL" ]; then
		need_disk 2048
		"$PY" "$HERE/bench/mktree.py" "$RMTPL" "$RM_FILES" $((RM_FILES * 2048)) 7 || die "mktree failed"
	fi
	local ws="$RUN/rmws"
	mkdir -p "$ws"
	RM_SIG=$(tree_sig "$RMTPL")
	# The committed run keeps its journal as history (undo): its state dir
	# is removed in the next prepare, off the clock. That removal is a cost
	# paid later, when the run leaves the history bound; it gets its own row.
	local kept="$RUN/rm-kept-state"
	rm_prep() { rm -rf "$ws/sub" "$kept"; cp -a "$RMTPL" "$ws/sub"; sync -f "$ws"; }
	rm_run() {
		cd "$ws" || return 1
		case $1 in
		native) rm -rf sub ;;
		txguard) "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$kept" \
			-w "$ws" -- rm -rf sub ;;
		txguard-failed)
			# Under GNU time: the memory section takes txguard's peak RSS from here.
			local st rc
			st=$(mktemp -d "$RUN/state.XXXXXX")
			/usr/bin/time -f %M -a -o "$RUN/rm-rss" "$TXGUARD" -q --no-default-policy \
				-p "$REPO/policy.d" --state-dir "$st" -w "$ws" -- sh -c 'rm -rf sub; exit 1'
			rc=$?
			rm -rf "$st"
			[ $rc = 1 ] ;;
		esac
	}
	local vs=native m mn
	[ "$TG_OK" = 1 ] && vs+=" txguard txguard-failed"
	# At most two rounds: on a loaded machine one round of 30k files takes minutes.
	local REPS=$((REPS > 2 ? 2 : REPS))
	bench_variants rmrf rm_prep rm_run $vs
	if [ "$TG_OK" = 1 ]; then
		# The last variant run was the failed one: the subtree must be back exactly.
		local sig
		sig=$(tree_sig "$ws/sub")
		if [ "$sig" = "$RM_SIG" ]; then
			TABLE[-1]+="restored exactly (names, types, modes, sizes)"
		else
			TABLE[-1]+="NOT RESTORED: tree differs after the failed run"
		fi
			rm_restore_time
		rm_history_drop

	fi
}

# What a committed rm -rf leaves for later: its journal holds the removed
# files (hard links) until the run falls out of the history bound, and then
# their blocks are freed, by the commit that prunes it. Timed here as the
# removal of that run's state dir.
rm_history_drop() {
	local ws="$RUN/rmws" kept="$RUN/rm-kept-state" r t all="" m mn
	for ((r = 1; r <= REPS; r++)); do
		rm_prep
		(cd "$ws" && "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$kept" \
			-w "$ws" -- rm -rf sub) >/dev/null 2>&1 || return 0
		sync -f "$ws"
		timed t rm -rf "$kept" || return 0
		all+=" $t"
	done
	read -r m mn < <(stats "$all")
	row rmrf "history drop (later)" "$m" "$mn" "$(ratio "$m" "$(cell rmrf native)")" "" \
		"freeing the committed run's journal when it leaves the history; not on the run's clock"
}

# The restore alone, timed: a multi-command transaction (begin; rm -rf under --tx;
# rollback), so that only `txguard rollback` is on the clock.
rm_restore_time() {
	local ws="$RUN/rmws" st="$RUN/state-tx" r t id all="" ok=1 m mn
	for ((r = 1; r <= REPS; r++)); do
		rm_prep
		rm -rf "$st"
		id=$("$TXGUARD" begin -w "$ws" --state-dir "$st" 2>/dev/null) && [ -n "$id" ] || { ok=0; break; }
		(cd "$ws" && "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$st" \
			-w "$ws" --tx "$id" -- rm -rf sub) >/dev/null 2>&1 || { ok=0; break; }
		[ ! -e "$ws/sub" ] || { ok=0; break; }
		timed t "$TXGUARD" rollback -w "$ws" --state-dir "$st" "$id" || { ok=0; break; }
		[ "$(tree_sig "$ws/sub")" = "$RM_SIG" ] || { ok=0; break; }
		all+=" $t"
	done
	rm -rf "$st"
	if [ "$ok" = 1 ]; then
		read -r m mn < <(stats "$all")
		row rmrf "restore alone" "$m" "$mn" "$(ratio "$m" "$(cell rmrf native)")" "" \
			"txguard rollback of begin + rm -rf under --tx; restored exactly"
	else
		row rmrf "restore alone" "" "" "" "" "not measured: begin / --tx / rollback did not work (txguard-failed above = rm + restore)"
	fi
}

# In-place edit of a big file: txguard must copy the pre-image first.
make_big() { # make_big FILE MiB: half random, half text-like, 1 MiB blocks
	[ -f "$1" ] && [ "$(stat -c %s "$1")" = $(($2 << 20)) ] && return 0
	need_disk $(($2 * 3 + 512))
	"$PY" - "$1" "$2" <<'EOF'
import random, sys
rng = random.Random(3)
text = b"".join(b"static int tg_%d(struct x *p) { return p->n + %d; }\n" % (i, i * 7) for i in range(30000))
with open(sys.argv[1] + ".partial", "wb") as f:
    for i in range(int(sys.argv[2])):
        if i % 2:
            f.write(rng.randbytes(1 << 20))
        else:
            off = rng.randrange(0, len(text) - (1 << 20))
            f.write(text[off:off + (1 << 20)])
import os
os.rename(sys.argv[1] + ".partial", sys.argv[1])
EOF
}
EDIT_CMD='dd if=/dev/urandom of=big.bin bs=4096 count=1 conv=notrunc status=none'
big_variants() { # big_variants SECTION WS: native edit, txguard edit, txguard true, zstd -1
	local section=$1 ws=$2
	big_prep() { :; }
	big_run() {
		cd "$ws" || return 1
		case $1 in
		native) sh -c "$EDIT_CMD" ;;
		txguard-edit) tg "$ws" sh -c "$EDIT_CMD" ;;
		txguard-true) tg "$ws" true ;;
		zstd-1) zstd -1 -q -f big.bin -o "$ws/../big.zst" && sync "$ws/../big.zst" ;;
		cp-reflink) cp --reflink=always big.bin "$ws/../big.clone" && sync "$ws/../big.clone" ;;
		esac
	}
	local vs="native"
	[ "$TG_OK" = 1 ] && vs+=" txguard-edit txguard-true"
	vs+=" zstd-1"
	[ "$section" = reflink ] && vs+=" cp-reflink"
	bench_variants "$section" big_prep big_run $vs
	rm -f "$ws/../big.zst" "$ws/../big.clone"
	local z
	z=$(cell "$section" zstd-1)
	row "$section" "zstd-1 throughput" "$(awk -v t="$z" -v m="$BIG_MIB" 'BEGIN { printf "%.0f", m / t }')" "" "" "" "MiB/s (compress + write + fsync)"
	if [ "$TG_OK" = 1 ]; then
		local e t
		e=$(cell "$section" txguard-edit)
		t=$(cell "$section" txguard-true)
		row "$section" "capture throughput" "$(awk -v a="$e" -v b="$t" -v m="$BIG_MIB" 'BEGIN { d = a - b; if (d <= 0) print "inf"; else printf "%.0f", m / d }')" "" "" "" "MiB/s = size / (txguard-edit - txguard-true)"
		# And the failed edit must give the first block back.
		local before after
		before=$(head -c 4096 "$ws/big.bin" | md5sum)
		(cd "$ws" && tg "$ws" sh -c "$EDIT_CMD; exit 1")
		after=$(head -c 4096 "$ws/big.bin" | md5sum)
		[ "$before" = "$after" ] && TABLE[-1]+="; failed edit restored" || TABLE[-1]+="; FAILED EDIT NOT RESTORED"
	fi
}
section_bigfile() {
	say "== bigfile: in-place 4 KiB write into a $BIG_MIB MiB file ($(findmnt -no FSTYPE -T "$BENCH_CACHE"))"
	local ws="$BENCH_CACHE/bigws-$BIG_MIB"
	mkdir -p "$ws"
	make_big "$ws/big.bin" "$BIG_MIB" || die "cannot make the big file"
	sync "$ws/big.bin"
	big_variants bigfile "$ws"
}

# The same on XFS with reflink, in a loop-mounted image file (never a real device).
section_reflink() {
	say "== reflink: the same edit on an XFS loop mount (reflink=1)"
	if [ "$(id -u)" != 0 ] || ! command -v mkfs.xfs >/dev/null || ! command -v losetup >/dev/null; then
		row reflink skipped "" "" "" "" "needs root, mkfs.xfs and losetup"
		return 0
	fi
	need_disk $((BIG_MIB * 3 + 1024))
	local img="$RUN/xfs.img" mnt="$RUN/xfs" loop
	truncate -s $((BIG_MIB * 3 + 512))M "$img"
	mkfs.xfs -q -m reflink=1 "$img" || { row reflink skipped "" "" "" "" "mkfs.xfs failed"; return 0; }
	loop=$(losetup -f --show "$img") || { row reflink skipped "" "" "" "" "no loop device"; return 0; }
	mkdir -p "$mnt"
	if ! mount "$loop" "$mnt"; then
		losetup -d "$loop"
		row reflink skipped "" "" "" "" "mount of the loop device failed"
		return 0
	fi
	# Unmount and detach whatever happens from here on.
	cleanup_run() { cd /; umount "$mnt" 2>/dev/null; losetup -d "$loop" 2>/dev/null; rm -rf "$RUN"; }
	mkdir -p "$mnt/ws"
	cp "$BENCH_CACHE/bigws-$BIG_MIB/big.bin" "$mnt/ws/big.bin" 2>/dev/null || make_big "$mnt/ws/big.bin" "$BIG_MIB"
	# Written back before the clock starts: FICLONE first flushes dirty pages, and
	# that writeback is the copy's cost, not txguard's.
	sync "$mnt/ws/big.bin"
	TG_STATE_PARENT="$mnt" big_variants reflink "$mnt/ws"
	cd /
	umount "$mnt" && losetup -d "$loop"
	cleanup_run() { rm -rf "$RUN"; }
}

# Peak memory of txguard itself (the traced commands are tiny).
section_memory() {
	say "== memory: txguard's max RSS"
	[ "$TG_OK" = 1 ] || { row memory skipped "" "" "" "" "txguard not working"; return 0; }
	ensure_tree
	mkdir -p "$RUN/empty" "$RUN/rmws"
	local kb_e kb_t kb_r
	kb_e=$(cd "$RUN/empty" && /usr/bin/time -f %M -o "$RUN/rss" "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$RUN/st1" -w "$RUN/empty" -- true >/dev/null 2>&1; tail -1 "$RUN/rss")
	kb_t=$(cd "$TREE" && /usr/bin/time -f %M -o "$RUN/rss" "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$RUN/st2" -w "$TREE" -- true >/dev/null 2>&1; tail -1 "$RUN/rss")
	row memory "txguard true, empty ws" "$kb_e" "" "" "" "KiB max RSS"
	row memory "txguard true, $TREE_FILES-file ws" "$kb_t" "" "" "" "KiB max RSS (ratio to empty: $(ratio "$kb_t" "$kb_e"))"
	if [ -s "$RUN/rm-rss" ]; then
		kb_r=$(grep -E '^[0-9]+$' "$RUN/rm-rss" | sort -n | tail -1)
		row memory "txguard rm -rf $RM_FILES files, failed" "$kb_r" "" "" "" "KiB max RSS (journal of $RM_FILES records + restore; from the rmrf section)"
	elif [ -d "$RMTPL" ]; then
		rm -rf "$RUN/rmws/sub"
		cp -a "$RMTPL" "$RUN/rmws/sub"
		kb_r=$(cd "$RUN/rmws" && /usr/bin/time -f %M -o "$RUN/rss" "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$RUN/st3" -w "$RUN/rmws" -- sh -c 'rm -rf sub; exit 1' >/dev/null 2>&1; tail -1 "$RUN/rss")
		row memory "txguard rm -rf $RM_FILES files, failed" "$kb_r" "" "" "" "KiB max RSS (journal of $RM_FILES records + restore)"
	fi
	rm -rf "$RUN/st1" "$RUN/st2" "$RUN/st3"
}

# ---- (e) what an agent's tool calls pay: start-up, long argv, sessions, big changes ----

# tgs WS CMD...: CMD under txguard with a state dir kept for the whole section
# ($RUN/state-agent), as a user's is: its history fills and is pruned like a
# real one.
tgs() {
	local ws=$1
	shift
	"$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$RUN/state-agent" -w "$ws" -- "$@"
}

# `txguard -- /bin/true` against bare /bin/true and against bubblewrap's
# cheapest sandbox, START_REPS rounds: the price of one tool call.
section_start() {
	say "== start: /bin/true bare, in bwrap, under txguard (empty and $TREE_FILES-file workspace;"
	say "   and a workspace whose history holds the default 50 committed runs;"
	say "   and touch of a workspace file, whose pre-image the journal saves, with a short"
	say "   history and with the full one)"
	ensure_tree
	mkdir -p "$RUN/empty" "$RUN/hist" "$RUN/edit"
	echo content > "$RUN/edit/f"
	# tgh: txguard in $RUN/hist, whose state dir keeps a full history.
	tgh() { "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$RUN/state-hist" -w "$RUN/hist" -- "$@"; }
	if [ "$TG_OK" = 1 ]; then
		local i
		for ((i = 0; i < 50; i++)); do
			(cd "$RUN/hist" && tgh sh -c "echo $i > f$((i % 5))") || die "start: filling the history failed"
		done
	fi
	start_prep() { :; }
	start_run() {
		case $1 in
		native) /bin/true ;;
		bwrap) bwrap --ro-bind / / --dev /dev --proc /proc /bin/true ;;
		txguard-empty) cd "$RUN/empty" && tgs "$RUN/empty" /bin/true ;;
		txguard-tree) cd "$TREE" && tgs "$TREE" /bin/true ;;
		txguard-history) cd "$RUN/hist" && tgh /bin/true ;;
		native-edit) touch "$RUN/edit/f" ;;
		# Its own state dir: these runs change something, and the row
		# below counts the history entries of those that did not.
		txguard-edit) cd "$RUN/edit" && "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" \
			--state-dir "$RUN/state-edit" -w "$RUN/edit" -- touch f ;;
		# The same edit where the history is full: each commit retires
		# the oldest run, what every commit of a long session pays.
		txguard-edit-history) cd "$RUN/hist" && tgh touch f0 ;;
		esac
	}
	local vs="native"
	command -v bwrap >/dev/null && bwrap --ro-bind / / --dev /dev --proc /proc /bin/true 2>/dev/null && vs+=" bwrap"
	[ "$TG_OK" = 1 ] && vs+=" txguard-empty txguard-tree txguard-history native-edit txguard-edit txguard-edit-history"
	local REPS=$START_REPS
	BV_NOTE="/bin/true; times in s" bench_variants start start_prep start_run $vs
	if [ "$TG_OK" = 1 ] && [ -n "$(cell start bwrap)" ]; then
		row start "txguard-empty/bwrap" "" "" "$(ratio "$(cell start txguard-empty)" "$(cell start bwrap)")" \
			"$(ratio "$(cell start txguard-empty 4)" "$(cell start bwrap 4)")" "target: <= 0.8"
	fi
	[ "$TG_OK" = 1 ] && row start "history entries" "$(ls "$RUN/state-agent/txn" 2>/dev/null | wc -l)" "" "" "" \
		"left by $((START_REPS * 2)) runs that changed nothing"
	[ "$TG_OK" = 1 ] && row start "txguard-edit - txguard-empty" \
		"$(awk -v a="$(cell start txguard-edit)" -v b="$(cell start txguard-empty)" 'BEGIN { printf "%.4f", a - b }')" \
		"" "" "" "what one saved pre-image and its commit add, in s"
	[ "$TG_OK" = 1 ] && row start "txguard-edit-history - txguard-edit" \
		"$(awk -v a="$(cell start txguard-edit-history)" -v b="$(cell start txguard-edit)" 'BEGIN { printf "%.4f", a - b }')" \
		"" "" "" "what a full history (pruned at each commit) adds to that commit, in s"
	rm -rf "$RUN/state-agent" "$RUN/state-hist" "$RUN/hist" "$RUN/state-edit" "$RUN/edit"
}

# One exec with ARGV_N arguments.
section_argv() {
	say "== argv: sh -c 'echo \$#' with $ARGV_N arguments"
	mkdir -p "$RUN/argv"
	mapfile -t ARGV_LIST < <(seq 1 "$ARGV_N")
	argv_prep() { :; }
	argv_run() {
		cd "$RUN/argv" || return 1
		case $1 in
		native) sh -c 'echo $#' sh "${ARGV_LIST[@]}" ;;
		# Not through tgs: a bash function call with 100,000 words
		# costs bash about 0.2 s, which native would not pay.
		txguard) "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$RUN/state-agent" \
			-w "$RUN/argv" -- sh -c 'echo $#' sh "${ARGV_LIST[@]}" ;;
		esac
	}
	BV_NOTE="$ARGV_N arguments" bench_variants argv argv_prep argv_run $(variants)
	rm -rf "$RUN/state-agent"
}

# The real repository of the session and bigchange sections.
REPO_FIX="$BENCH_CACHE/repo"
ensure_repo() {
	[ -d "$REPO_FIX" ] && return 0
	need_disk 2048
	say "bench: making $REPO_FIX (git history of /usr/include and Python's library; cached)"
	"$HERE/bench/mkrepo.sh" "$REPO_FIX" || die "mkrepo failed"
}

# A sequential agent-like session: SESSION_N short tool calls in one
# workspace (a clone of the repository), each its own txguard run.
session_cmds() {
	local i
	for ((i = 0; i < SESSION_N; i++)); do
		case $((i % 7)) in
		0) echo "ls -la include" ;;
		1) echo "cat lib/os.py" ;;
		2) echo "grep -rl ENOENT include/asm-generic" ;;
		3) echo "sed -i s/import/import/ lib/subprocess.py" ;;
		4) echo "git status --short" ;;
		5) echo "git diff --stat" ;;
		6) echo "$PY -c print(1)" ;;
		esac
	done
}
section_session() {
	say "== session: $SESSION_N short commands in a clone of a real repository"
	ensure_repo
	local ws="$RUN/session"
	rm -rf "$ws"
	git clone -q "$REPO_FIX" "$ws" || die "clone failed"
	mapfile -t SESSION < <(session_cmds)
	session_prep() { rm -rf "$RUN/state-agent"; (cd "$ws" && git checkout -q -f -- .); }
	session_run() {
		cd "$ws" || return 1
		local c
		for c in "${SESSION[@]}"; do
			# (word splitting of the command line is the point)
			# shellcheck disable=SC2086
			case $1 in
			native) $c >/dev/null ;;
			txguard) tgs "$ws" $c >/dev/null ;;
			esac
		done
	}
	BV_NOTE="$SESSION_N commands" bench_variants session session_prep session_run $(variants)
	rm -rf "$RUN/state-agent"
}

# Large real changes, committed, and their rollback alone (begin; change
# under --tx; rollback, timed): git checkout between two distant revisions,
# and SMALL_FILES small files written the way pip install --target does.
SMALL_PY='import os, sys
d = sys.argv[1]
for i in range(int(sys.argv[2])):
    p = os.path.join(d, "pkg%03d" % (i // 200))
    if i % 200 == 0:
        os.makedirs(p)
    with open(os.path.join(p, "m%05d.py" % i), "w") as f:
        f.write("VALUE = %d\n" % i)'
big_change() { # big_change KIND: the change itself, in the cwd
	# exec: the tool is the tree's only process, as in `txguard -- git
	# checkout`, not a child of a shell that waits (a second task keeps
	# each creation's exit stop: docs/journal.md, "alone").
	case $1 in
	checkout) exec git checkout -q old -- ;;
	files) mkdir site && exec "$PY" -c "$SMALL_PY" site "$SMALL_FILES" ;;
	esac
}
big_script() { # big_script KIND: big_change KIND as a script for sh -c
	printf '%s\nPY=%s SMALL_FILES=%s\nSMALL_PY=%s\nbig_change %s\n' "$(declare -f big_change)" \
		"$PY" "$SMALL_FILES" "'$SMALL_PY'" "$1"
}
big_reset() { # big_reset KIND WS: back to the start, natively
	case $1 in
	checkout) (cd "$2" && git checkout -q -f new -- && git clean -qfdx) ;;
	files) rm -rf "$2/site" ;;
	esac
}
big_sig() { (cd "$1" && find . -path ./.git -prune -o -printf '%p %y %m %s\n' | sort | md5sum); }
section_bigchange() {
	say "== bigchange: git checkout new -> old (20 commits apart); $SMALL_FILES small files"
	ensure_repo
	local ws="$RUN/big" kind
	rm -rf "$ws"
	git clone -q "$REPO_FIX" "$ws" || die "clone failed"
	(cd "$ws" && git checkout -q new --)
	for kind in checkout files; do
		big_prep() { rm -rf "$RUN/state-agent"; big_reset "$kind" "$ws"; sync -f "$ws"; }
		big_run() {
			cd "$ws" || return 1
			# The same sh -c for both: only txguard differs.
			case $1 in
			native) sh -c "$(big_script "$kind")" ;;
			txguard) tgs "$ws" sh -c "$(big_script "$kind")" ;;
			esac
		}
		BV_NOTE="$kind" bench_variants "big-$kind" big_prep big_run $(variants)
		[ "$TG_OK" = 1 ] && big_rollback "$kind" "$ws"
	done
	rm -rf "$RUN/state-agent"
}
big_rollback() {
	local kind=$1 ws=$2 st="$RUN/state-tx" r t id all="" ok=1 m mn sig
	big_reset "$kind" "$ws"
	sig=$(big_sig "$ws")
	for ((r = 1; r <= REPS; r++)); do
		big_reset "$kind" "$ws"
		rm -rf "$st"
		sync -f "$ws"
		id=$("$TXGUARD" begin -w "$ws" --state-dir "$st" 2>/dev/null) && [ -n "$id" ] || { ok=0; break; }
		(cd "$ws" && "$TXGUARD" -q --no-default-policy -p "$REPO/policy.d" --state-dir "$st" \
			-w "$ws" --tx "$id" -- sh -c "$(big_script "$kind")") \
			>/dev/null 2>&1 || { ok=0; break; }
		timed t "$TXGUARD" rollback -w "$ws" --state-dir "$st" "$id" || { ok=0; break; }
		[ "$(big_sig "$ws")" = "$sig" ] || { ok=0; break; }
		all+=" $t"
	done
	rm -rf "$st"
	if [ "$ok" = 1 ]; then
		read -r m mn < <(stats "$all")
		row "big-$kind" "rollback alone" "$m" "$mn" "$(ratio "$m" "$(cell "big-$kind" native)")" "" \
			"ratio vs the native change; restored exactly (names, types, modes, sizes); target <= 1"
	else
		row "big-$kind" "rollback alone" "" "" "" "" "FAILED: begin/--tx/rollback did not restore the tree"
	fi
}

main() {
	command -v strace >/dev/null || die "strace is needed (apt-get install strace)"
	command -v zstd >/dev/null || die "zstd is needed (apt-get install zstd)"
	check_txguard
	machine_line
	local s
	for s in build forkexec trapcost txn rmrf bigfile reflink memory start argv session bigchange; do
		want "$s" || continue
		local t0=$SECONDS
		"section_$s"
		say "   ($s: $((SECONDS - t0)) s)"
		cd "$RUN" || exit 1
	done
	echo
	table_print
	echo
	echo "ratios: median/median and min/min against the first row of each section (native)."
}

main
