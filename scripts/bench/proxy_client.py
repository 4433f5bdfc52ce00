#!/usr/bin/env python3
"""proxy_client.py N HOST PORT [proxy|direct] — N small GETs, one connection
each, through $http_proxy (absolute-form URI) or straight to 127.0.0.1.
Prints the seconds taken."""
import os
import socket
import sys
import time
import urllib.parse

n, host, port, mode = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
if mode == "proxy":
    pu = urllib.parse.urlsplit(os.environ["http_proxy"])
    addr = (pu.hostname, pu.port)
    req = f"GET http://{host}:{port}/small HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
else:
    addr = ("127.0.0.1", port)
    req = f"GET /small HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
t0 = time.monotonic()
for _ in range(n):
    s = socket.create_connection(addr)
    s.sendall(req)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    if not data.endswith(b"hello"):
        sys.exit("bad answer: %r" % data[:200])
print("%.3f" % (time.monotonic() - t0))
