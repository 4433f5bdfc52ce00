#!/bin/bash
# proxy_test.sh — network: hosts: end to end, with local servers only.
#
# Runs inside a network namespace of its own (unshare -n, loopback up) when
# it can: then no packet can leave the machine even if a check below were
# wrong. Every server listens on 127.0.0.1; test host names reach them
# through TXGUARD_PROXY_RESOLVE (the proxy's test name map), so no DNS is
# involved. Cases: HTTPS (CONNECT) and plain HTTP to an allowed host, a
# denied host (one decision, one stderr line), an SNI that differs from the
# CONNECT host, a direct connect past the proxy, DNS, git clone over HTTP and
# HTTPS, pip download from a local index, bad input and faults, and nothing
# listening once the run is over.
. "$(dirname "$0")/../lib/common.sh"

if [ -z "${TG_NET_NS:-}" ] && unshare -n true 2>/dev/null; then
	exec unshare -n env TG_NET_NS=1 "$0" "$@"
fi
if [ -n "${TG_NET_NS:-}" ]; then
	ip link set lo up 2>/dev/null || skip "cannot bring up loopback in the test's network namespace"
fi
for t in curl openssl python3 git; do
	command -v "$t" >/dev/null || skip "$t missing (scripts/install-deps.sh installs it)"
done
PY=$(command -v python3)
HERE=$TXGUARD_SOURCE_DIR/tests/net
tg_tmpdir
cd "$TG_TMP"

# ---- the servers ----
mkdir www ws
echo hello > www/hello.txt
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
	-subj /CN=good.test -addext "subjectAltName=DNS:good.test,DNS:other.test,DNS:a.mirror.test" \
	>/dev/null 2>&1 || fail "openssl req"
git init -q --bare www/repo.git
git -C www/repo.git config http.receivepack false
(
	git init -q src && cd src && echo content > f.txt && git add f.txt &&
	git -c user.name=t -c user.email=t@t commit -qm one && git push -q ../www/repo.git HEAD:main
) || fail "cannot build the test repository"
git -C www/repo.git symbolic-ref HEAD refs/heads/main
git -C www/repo.git update-server-info
# A PEP 503 index with one wheel.
mkdir -p www/simple/demo-pkg
"$PY" - <<'PYEOF'
import zipfile
name = "demo_pkg-1.0-py3-none-any.whl"
with zipfile.ZipFile("www/simple/demo-pkg/" + name, "w") as z:
    z.writestr("demo_pkg/__init__.py", "")
    z.writestr("demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
    z.writestr("demo_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo_pkg-1.0.dist-info/RECORD", "")
open("www/simple/demo-pkg/index.html", "w").write(f'<html><body><a href="{name}">{name}</a></body></html>\n')
open("www/simple/index.html", "w").write('<html><body><a href="demo-pkg/">demo-pkg</a></body></html>\n')
PYEOF
"$PY" "$HERE/servers.py" www cert.pem key.pem ports &
SERVERS=$!
trap 'kill $SERVERS 2>/dev/null; rm -rf "$TG_TMP"' EXIT
for _ in $(seq 100); do [ -s ports ] && break; sleep 0.2; done
[ -s ports ] || fail "the test servers did not start"
read -r HTTP TLS BLACK < ports

cat > hosts.yaml <<YEOF
version: 1
network:
  hosts:
    allow: [good.test, "*.mirror.test", "black.test:$BLACK", localhost]
    deny: [bad.mirror.test]
    examples:
      match: ["good.test:443", "a.mirror.test"]
      not_match: ["other.test:443", "mirror.test", "bad.mirror.test"]
YEOF
export TXGUARD_PROXY_RESOLVE=good.test:127.0.0.1,other.test:127.0.0.1,a.mirror.test:127.0.0.1,black.test:127.0.0.1
"$TXGUARD" policy check -p "$TXGUARD_POLICY_DIR" hosts.yaml >/dev/null || fail "policy check of hosts.yaml"

# run NAME CMD...: txguard with the host rules, report in NAME.json, stderr in
# NAME.err. The command runs in ws/: paths it gets are absolute.
run() {
	local name=$1
	shift
	"$TXGUARD" -w ws -p "$TXGUARD_POLICY_DIR" -p hosts.yaml --report "$name.json" --log "$name.log" \
		--timeout 120 -- "$@" 2> "$name.err"
}
# conns NAME: one line per proxy connection: method host port action rule sni
conns() {
	"$PY" -c 'import json,sys
r = json.load(open(sys.argv[1]))
for c in r.get("connections", []):
    print(c["method"], c["host"], c["port"], c["action"], c["rule"], c["sni"], c["bytes_down"] > 0)' "$1.json"
}

# ---- allowed host: HTTPS through CONNECT, plain HTTP ----
out=$(run https curl -sS --cacert "$TG_TMP/cert.pem" "https://good.test:$TLS/hello.txt") || fail "https: $(cat https.err)"
assert_eq "https body" hello "$out"
assert_eq "https connection" "CONNECT good.test $TLS allow network-hosts-allow good.test True" "$(conns https)"
out=$(run http curl -sS "http://good.test:$HTTP/hello.txt") || fail "http: $(cat http.err)"
assert_eq "http body" hello "$out"
assert_eq "http connection" "GET good.test $HTTP allow network-hosts-allow None True" "$(conns http)"
"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" report https.json http.json >/dev/null || fail "report schema"
"$PY" "$TXGUARD_SOURCE_DIR/tests/audit/validate.py" log https.log http.log >/dev/null || fail "log schema"
grep -q '"event":"connection".*"host":"good.test"' https.log || fail "no connection event in the log"

# A name the proxy resolves itself (getaddrinfo in its resolver threads;
# localhost comes from /etc/hosts, no DNS). no_proxy lists localhost, so
# the proxy is named explicitly.
out=$(run localhost sh -c 'curl -sS --noproxy "" -x "$http_proxy" "http://localhost:'"$HTTP"'/hello.txt"') ||
	fail "localhost through the proxy: $(cat localhost.err)"
assert_eq "localhost body" hello "$out"
assert_eq "localhost connection" "GET localhost $HTTP allow network-hosts-allow None True" "$(conns localhost)"

# ---- denied host: the command sees an error, one decision, one line ----
rc=0
run denied sh -c "curl -sS --cacert $TG_TMP/cert.pem https://other.test:$TLS/hello.txt; curl -sS --cacert $TG_TMP/cert.pem https://other.test:$TLS/hello.txt" || rc=$?
[ "$rc" -ne 0 ] || fail "curl to a denied host succeeded"
assert_eq "denied connections" "CONNECT other.test $TLS deny network-hosts-default-deny None False
CONNECT other.test $TLS deny network-hosts-default-deny None False" "$(conns denied)"
assert_eq "stderr lines for the denied host" 1 "$(grep -c "txguard: denied connection to other.test:$TLS by rule network-hosts-default-deny" denied.err)"
assert_eq "denied count" 2 "$("$PY" -c 'import json;print(json.load(open("denied.json"))["decision_counts"]["denied"])')"
rc=0
run deny-entry curl -sS "http://bad.mirror.test:$HTTP/hello.txt" >/dev/null || rc=$?
assert_eq "deny entry" "GET bad.mirror.test $HTTP deny network-hosts-deny None False" "$(conns deny-entry)"

# ---- the TLS server name must be the CONNECT host (no fronting) ----
rc=0
run sni curl -sS --cacert "$TG_TMP/cert.pem" --connect-to "other.test:$TLS:good.test:$TLS" "https://other.test:$TLS/hello.txt" || rc=$?
[ "$rc" -ne 0 ] || fail "SNI other.test through a CONNECT to good.test succeeded"
assert_eq "sni connection" "CONNECT good.test $TLS deny network-hosts-sni other.test False" "$(conns sni)"

# ---- past the proxy: direct connects and DNS are refused by the tracer ----
# 192.0.2.1 is TEST-NET-1 (never routed); inside our namespace there is no
# route either, so only the errno tells whether txguard refused it.
cat > direct.py <<'PYEOF'
import errno, socket
def try_(kind, addr):
    s = socket.socket(socket.AF_INET, kind)
    try:
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"\0" * 12, addr)
        else:
            s.connect(addr)
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print(try_(socket.SOCK_STREAM, ("192.0.2.1", 443)), try_(socket.SOCK_DGRAM, ("127.0.0.53", 53)),
      try_(socket.SOCK_STREAM, ("127.0.0.1", 9)))
PYEOF
out=$(run direct "$PY" "$TG_TMP/direct.py") || true
assert_eq "direct connect, DNS, loopback" "EACCES EACCES ECONNREFUSED" "$out"
grep -q "denied connect to 192.0.2.1:443 by rule network-hosts-proxy: .*HTTPS_PROXY" direct.err ||
	fail "no denial line naming the proxy variables: $(cat direct.err)"
grep -q "by rule network-hosts-dns" direct.err || fail "no DNS denial line"

# ---- git clone over HTTP and HTTPS, pip download from a local index ----
run git-http git clone -q "http://good.test:$HTTP/repo.git" clone-http || fail "git clone http: $(cat git-http.err)"
assert_eq "git http clone" content "$(cat ws/clone-http/f.txt)"
GIT_SSL_CAINFO=$PWD/cert.pem run git-https git clone -q "https://good.test:$TLS/repo.git" clone-https ||
	fail "git clone https: $(cat git-https.err)"
assert_eq "git https clone" content "$(cat ws/clone-https/f.txt)"
if "$PY" -m pip --version >/dev/null 2>&1; then
	PIP_DISABLE_PIP_VERSION_CHECK=1 run pip "$PY" -m pip download -q --no-cache-dir --no-deps \
		--index-url "http://good.test:$HTTP/simple/" --trusted-host good.test -d dl demo-pkg ||
		fail "pip download: $(cat pip.err)"
	[ -s ws/dl/demo_pkg-1.0-py3-none-any.whl ] || fail "pip downloaded nothing"
else
	echo "note: no pip, pip download case not run" >&2
fi

# ---- bad input and faults: errors, not hangs; the proxy stays up ----
TXGUARD_PROXY_TIMEOUT=1s run bounds "$PY" "$HERE/bounds.py" good.test "$HTTP" black.test "$BLACK" > bounds.out ||
	fail "bounds: $(cat bounds.out bounds.err)"
cat bounds.out
grep -q "host that never answers: ok" bounds.out || fail "bounds: $(cat bounds.out)"

# ---- nothing listens once the run is over ----
run port sh -c 'echo "$http_proxy"' > port.out || fail "port run"
port=${port:-}
port=$(sed 's|.*:||' port.out)
[ -n "$port" ] || fail "no proxy port in the environment"
if "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)' "$port" 2>/dev/null; then
	fail "something still listens on the proxy's port $port after the run"
fi

# ---- no host rules: no proxy, no variables ----
out=$("$TXGUARD" -w ws -- sh -c 'echo "${http_proxy:-none}"' 2>/dev/null)
assert_eq "no proxy without host rules" none "$out"
echo "proxy test: ok"
