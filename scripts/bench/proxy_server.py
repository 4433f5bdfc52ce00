#!/usr/bin/env python3
"""proxy_server.py FILE PORTFILE — the local server of bench-proxy.sh.

GET /big answers with FILE through sendfile(2) (so that the direct path is
as fast as loopback allows and the proxy cannot hide behind a slow server);
any other path answers 5 bytes. One request per connection. 127.0.0.1 only.
"""
import os
import socket
import sys
import threading


def handle(c, path):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(65536)
            if not chunk:
                return
            data += chunk
        target = data.split(b" ", 2)[1]
        if target == b"/big":
            size = os.path.getsize(path)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
            with open(path, "rb") as f:
                c.sendfile(f)
        else:
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
    finally:
        c.close()


def main():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(1024)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c, sys.argv[1]), daemon=True).start()


main()
