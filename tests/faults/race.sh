#!/bin/sh
# race.sh — two processes of one traced tree call on the same names at the
# same moment, then the run fails: the restore must give back every file.
# Process B renames m<i> onto f<i> while process A removes, overwrites or
# moves f<i> (a pipe lines each pair up). A's call used to be journaled at
# its stop for what f<i> held then, the original, and run after B's move:
# the unlink removed m<i>'s file, which nothing had saved (8 to 23 files
# lost in 500 pairs), or a rename was refused as a journal failure. Now a
# call waits at its stop while another task's call on its name may still
# be running (docs/journal.md, "Calls on one name"), a symlink it goes
# through counting among its names. Also: the same race, committed,
# reported as the tree shows it (summary_check.py).
. "$(dirname "$0")/lib.sh"
require_runs
command -v python3 >/dev/null || skip "needs python3"
pairs=${TG_RACE_PAIRS:-300}
ws=$T/ws
st=$T/state

cat >"$T/race.py" <<'EOF'
import os, sys
mode, n, code = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
go_r, go_w = os.pipe()
done_r, done_w = os.pipe()
child = os.fork()
for i in range(n):
    if child == 0:  # B: the move onto f<i>
        os.read(go_r, 1)
        try:
            os.rename("m%d" % i, "f%d" % i)
        except OSError:
            pass
        os.write(done_w, b".")
        continue
    os.write(go_w, b".")  # A: a call on f<i>, at the same moment
    try:
        if mode == "unlink":
            os.unlink("f%d" % i)
        elif mode in ("write", "linkwrite"):
            with open("f%d" % i, "w") as f:
                f.write("written %d\n" % i)
        elif mode == "trunc":  # a write that creates nothing
            fd = os.open("f%d" % i, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, b"written\n")
            os.close(fd)
        elif mode == "chmod":
            os.chmod("f%d" % i, 0o600)
        else:
            os.rename("f%d" % i, "g%d" % i)
    except OSError:
        pass
    os.read(done_r, 1)
if child == 0:
    os._exit(0)
os.waitpid(child, 0)
sys.exit(code)
EOF

fresh_ws() { # fresh_ws [link]: f<i> a file, or with link a symlink to t<i>, which is not there
	rm -rf "$ws" "$st"
	mkdir -p "$ws"
	i=0
	while [ $i -lt "$pairs" ]; do
		if [ "${1:-}" = link ]; then
			ln -s "t$i" "$ws/f$i"
		else
			echo "original $i" >"$ws/f$i"
		fi
		echo "mover $i" >"$ws/m$i"
		i=$((i + 1))
	done
	manifest "$ws" >"$T/before"
}

# linkwrite: A writes through the symlink f<i> while B's move replaces it.
# A's open is journaled as a creation of t<i>, where the link leads; run
# after the move, it truncates m<i>'s file instead, which nothing saved.
# The symlink's own name is one of the names A's call is on.
for mode in unlink write rename linkwrite trunc chmod; do
	case $mode in
	linkwrite) fresh_ws link ;;
	*) fresh_ws ;;
	esac
	rc=$(cd "$ws" && code tg -w "$ws" --state-dir "$st" -- python3 "$T/race.py" $mode "$pairs" 3 2>"$T/err")
	assert_eq "$mode: exit (the command's, not the restore's 125)" 3 "$rc"
	if grep -q "denied" "$T/err"; then fail "$mode: a call was refused: $(head -3 "$T/err")"; fi
	assert_manifest "$mode: after the rollback" "$T/before" "$ws"
	no_txn "$st"
done

# Committed: the report says what the tree shows.
fresh_ws
"$TG_TREEHASH" "$ws" >"$T/hash.before"
rc=$(cd "$ws" && code tg -w "$ws" --state-dir "$st" --report "$T/r.json" -- python3 "$T/race.py" unlink "$pairs" 0 2>"$T/err")
assert_eq "committed: exit" 0 "$rc"
"$TG_TREEHASH" "$ws" >"$T/hash.after"
python3 "$TXGUARD_SOURCE_DIR/tests/journal/summary_check.py" "$T/hash.before" "$T/hash.after" "$T/r.json" >"$T/why" ||
	fail "committed: the report disagrees with the tree: $(head -5 "$T/why")"
# A call that waits for one that cannot return until the waiter runs: B
# opens a FIFO for writing (O_CREAT of an existing name: awaited), which
# blocks until a reader opens it; A's O_RDWR open of it is that reader.
# A's wait ends at its bound (50 ms), never in a hang.
fresh_ws
mkfifo "$ws/fifo"
cat >"$T/fifo.py" <<'EOF'
import os, time
if os.fork() == 0:
    os.close(os.open("fifo", os.O_WRONLY | os.O_CREAT))
    os._exit(0)
time.sleep(0.2)  # B is in its open by now
os.close(os.open("fifo", os.O_RDWR))
os.wait()
EOF
rc=$(cd "$ws" && code timeout -s KILL 30 "$TXGUARD" -q --no-default-policy -p "$T/policy.yaml" -w "$ws" --state-dir "$st" \
	-- python3 "$T/fifo.py" 2>"$T/err")
assert_eq "fifo: exit (137: a hang, killed)" 0 "$rc"
echo "ok: calls of two tasks on one name, $pairs pairs each: restored exactly, reported as they ran; a wait ends"
