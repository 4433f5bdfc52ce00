#!/bin/sh
# control_sockets.sh — connects to the machine's control sockets are refused
# (issue 14). Inside the throwaway arena, listeners stand in at the real
# paths (/run/dbus/system_bus_socket, /run/systemd/private,
# /var/run/docker.sock, /run/libvirt/libvirt-sock): a connect under txguard
# fails with EACCES, the listener sees no client, and the report names the
# rule. Where this machine has a real system bus, `busctl --system` and
# `systemctl show` under txguard (both read-only) must fail the same way;
# where it has none, that half is skipped with a line saying so.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the arena needs root"
tg_need_arena
tg_tmpdir

out=$("$TXGUARD_SOURCE_DIR/scripts/arena" -- sh -c '
	WS=/tmp/cs-ws; mkdir -p $WS /run/dbus /run/systemd /run/libvirt; cd $WS
	for s in /run/dbus/system_bus_socket /run/systemd/private /var/run/docker.sock \
		/run/libvirt/libvirt-sock /run/control.sock; do
		rm -f $s
		python3 -c "
import socket, sys
l = socket.socket(socket.AF_UNIX); l.bind(sys.argv[1]); l.listen(1); l.settimeout(150)
try:
    c, _ = l.accept(); open(\"/tmp/accepted\", \"a\").write(sys.argv[1] + \"\\n\")
except OSError:
    pass
" $s &
		pids="$pids $!"
	done
	sleep 0.5
	# The control: without txguard a listener does accept.
	python3 -c "
import socket, time
for _ in range(300):
    try:
        socket.socket(socket.AF_UNIX).connect(\"/run/control.sock\"); break
    except OSError:
        time.sleep(0.1)
"
	for s in /run/dbus/system_bus_socket /run/systemd/private /var/run/docker.sock \
		/run/libvirt/libvirt-sock; do
		"$TXGUARD" -q -w $WS --report /tmp/r.json -- python3 -c "
import socket, sys, errno
c = socket.socket(socket.AF_UNIX)
try:
    c.connect(sys.argv[1]); print(\"connected\", sys.argv[1])
except OSError as e:
    print(\"refused\", sys.argv[1], errno.errorcode[e.errno])
" $s
		grep -o "\"rule\":\"[a-z-]*\"" /tmp/r.json | head -n 1
	done
	"$TXGUARD" -q -w $WS -- busctl --system list >/dev/null 2>&1; echo "busctl-rc=$?"
	# Listeners that got nothing are still waiting: end them.
	for p in $pids; do kill $p 2>/dev/null; done
	sleep 0.2
	[ -e /tmp/accepted ] && sed "s/^/accepted /" /tmp/accepted
	echo done
' 2>&1) || true
echo "$out"
for s in /run/dbus/system_bus_socket /run/systemd/private /var/run/docker.sock /run/libvirt/libvirt-sock; do
	echo "$out" | grep -qx "refused $s EACCES" || fail "connect to $s was not refused with EACCES"
done
echo "$out" | grep -qx '"rule":"system-control-sockets"' || fail "no system-control-sockets decision"
echo "$out" | grep -qx '"rule":"systemd-private"' || fail "no systemd-private decision"
echo "$out" | grep -qx '"rule":"container-sockets"' || fail "no container-sockets decision"
echo "$out" | grep -qx "accepted /run/control.sock" || fail "the control listener got no client"
echo "$out" | grep "^accepted" | grep -qv "control.sock" && fail "a listener got a client"
echo "$out" | grep -q "^busctl-rc=0$" && fail "busctl --system worked under txguard"

# The machine's own system bus, read-only calls only.
if [ -S /run/dbus/system_bus_socket ] && command -v busctl >/dev/null; then
	rc=0; "$TXGUARD" -q -w "$TG_TMP" -- busctl --system list >/dev/null 2>&1 || rc=$?
	[ "$rc" != 0 ] || fail "busctl --system list reached the real system bus"
else
	echo "SKIP (half): this machine has no system bus at /run/dbus/system_bus_socket" >&2
fi
exit 0
