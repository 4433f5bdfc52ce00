#!/bin/bash
# bench-proxy.sh — the egress proxy (network: hosts:) against direct
# loopback transfers, measured in one run (not a test).
#
# Usage: scripts/bench-proxy.sh [--reps N] [--size BYTES] [--requests N]
#   1. download of one big file (default 1 GiB, sparse) with curl: through
#      the proxy vs straight to 127.0.0.1; throughput ratio (target >= 0.9);
#   2. N small requests (default 10000), one connection each: through the
#      proxy vs direct; time ratio (target <= 1.3).
# Both variants run under txguard with the same host rules (loopback is
# direct in both), interleaved round-robin; figures are medians of --reps
# (default 3). Everything listens on 127.0.0.1. See docs/benchmarks.md.
set -eu
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
TXGUARD=${TXGUARD:-$HERE/../build/cmd/txguard}
[ -x "$TXGUARD" ] || TXGUARD=$HERE/../build-dev/cmd/txguard
REPS=3 SIZE=$((1 << 30)) REQS=10000
while [ $# -gt 0 ]; do
	case $1 in
	--reps) REPS=$2; shift ;;
	--size) SIZE=$2; shift ;;
	--requests) REQS=$2; shift ;;
	*) echo "usage: $0 [--reps N] [--size BYTES] [--requests N]" >&2; exit 2 ;;
	esac
	shift
done
TMP=$(mktemp -d /tmp/txguard-bench-proxy.XXXXXX)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
truncate -s "$SIZE" "$TMP/big"
mkdir "$TMP/ws"
python3 "$HERE/bench/proxy_server.py" "$TMP/big" "$TMP/port" &
SERVER=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TMP/port")
printf 'version: 1\nnetwork:\n  hosts:\n    allow: ["bench.test:%s"]\n' "$PORT" > "$TMP/hosts.yaml"
export TXGUARD_PROXY_RESOLVE=bench.test:127.0.0.1
tg() { "$TXGUARD" -q -w "$TMP/ws" -p "$HERE/../policy.d" -p "$TMP/hosts.yaml" -- "$@"; }

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

: > "$TMP/dl.direct"; : > "$TMP/dl.proxy"; : > "$TMP/rq.direct"; : > "$TMP/rq.proxy"
for r in $(seq "$REPS"); do
	tg curl -s -o /dev/null --noproxy '*' -w '%{speed_download}\n' "http://127.0.0.1:$PORT/big" >> "$TMP/dl.direct"
	tg curl -s -o /dev/null -w '%{speed_download}\n' "http://bench.test:$PORT/big" >> "$TMP/dl.proxy"
	tg python3 "$HERE/bench/proxy_client.py" "$REQS" bench.test "$PORT" direct >> "$TMP/rq.direct"
	tg python3 "$HERE/bench/proxy_client.py" "$REQS" bench.test "$PORT" proxy >> "$TMP/rq.proxy"
	echo "rep $r/$REPS done" >&2
done
echo "samples (bytes/s, seconds): download direct $(tr '\n' ' ' < "$TMP/dl.direct")| proxy $(tr '\n' ' ' < "$TMP/dl.proxy")"
echo "  requests direct $(tr '\n' ' ' < "$TMP/rq.direct")| proxy $(tr '\n' ' ' < "$TMP/rq.proxy")"
dd=$(median < "$TMP/dl.direct") dp=$(median < "$TMP/dl.proxy")
rd=$(median < "$TMP/rq.direct") rp=$(median < "$TMP/rq.proxy")
awk -v dd="$dd" -v dp="$dp" -v size="$SIZE" 'BEGIN {
	printf "download %d MiB: direct %.0f MiB/s, proxy %.0f MiB/s, ratio %.2f (target >= 0.90)\n",
	       size / 1048576, dd / 1048576, dp / 1048576, dp / dd }'
awk -v rd="$rd" -v rp="$rp" -v n="$REQS" 'BEGIN {
	printf "%d small requests: direct %.2f s, proxy %.2f s, ratio %.2f (target <= 1.30)\n",
	       n, rd, rp, rp / rd }'
