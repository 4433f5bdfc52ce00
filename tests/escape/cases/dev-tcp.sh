#!/bin/bash
# dev-tcp: bash's /dev/tcp and /dev/udp redirections open a socket and
# connect() inside bash itself: no external program to vet. Send a line to
# both denied addresses (see net.c): the loopback one where the runner's
# listener waits (a redirection that succeeds is a breach), and 10.255.255.1
# (never routable here: "Network is unreachable" means the connect reached
# the network stack, a breach; a refusal says "Operation not permitted",
# "Permission denied" or "Connection refused").
echo "esc: start dev-tcp" >&2
export LC_ALL=C
rc=1
for addr in "$ESC_LADDR" "$ESC_ADDR"; do
	for proto in tcp udp; do
		if err=$( { exec 3<>"/dev/$proto/$addr/$ESC_PORT" && echo "dev-$proto" >&3; } 2>&1); then
			echo "esc: /dev/$proto/$addr/$ESC_PORT: connected" >&2
			rc=0
			continue
		fi
		echo "esc: /dev/$proto/$addr/$ESC_PORT: $err" >&2
		case "$err" in
		*"not permitted"* | *"Permission denied"* | *"Connection refused"*) ;;
		*) rc=0 ;;
		esac
	done
done
exit $rc
