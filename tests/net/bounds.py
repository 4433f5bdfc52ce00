#!/usr/bin/env python3
"""bounds.py HOST PORT BLACKHOST BLACKPORT — run under txguard (through the
proxy in $http_proxy): bad input and faults, each must end in an HTTP error
from the proxy, never a hang; the proxy must stay up. Prints one line per
case and exits 0 when every case went as expected."""
import os
import socket
import sys
import urllib.parse

proxy = urllib.parse.urlsplit(os.environ["http_proxy"])
P = (proxy.hostname, proxy.port)
host, port, black, bport = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
bad = 0


def conn():
    s = socket.create_connection(P)
    s.settimeout(60)   # a hang fails the case; the proxy's own bound is 1 s here
    return s


def status(s):
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode(errors="replace")


def expect(name, got, want):
    global bad
    ok = want in got
    print(f"{name}: {'ok' if ok else 'FAIL'} ({got!r})")
    bad += 0 if ok else 1


def get_ok():
    s = conn()
    s.sendall(f"GET http://{host}:{port}/hello.txt HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return status(s)


s = conn()
s.sendall(b"GARBAGE\r\n\r\n")
expect("malformed", status(s), " 400 ")

s = conn()
s.sendall(b"GET http://" + b"a" * 30000)
expect("oversized header", status(s), " 431 ")

s = conn()
s.sendall(f"GET http://{host}:{port}/hello.txt HTTP/1.1\r\n".encode())
expect("slow loris", status(s), " 408 ")

s = conn()
s.sendall(f"CONNECT {black}:{bport} HTTP/1.1\r\n\r\n".encode())
expect("host that never answers", status(s), " 504 ")

# 1000 clients at once, each holding a connection open mid-header: the
# proxy still answers a real request.
many = []
for _ in range(1000):
    c = socket.create_connection(P)
    c.sendall(b"GET http://")
    many.append(c)
expect("request with 1000 open connections", get_ok(), " 200 ")
for c in many:
    c.close()
expect("proxy still up", get_ok(), " 200 ")
sys.exit(1 if bad else 0)
