#!/usr/bin/env python3
"""servers.py DIR CERT KEY PORTFILE — the local servers of tests/net.

Serves DIR over plain HTTP and over TLS (one self-signed certificate that
names several hosts), and keeps a "black hole": a listening socket whose
accept queue is full, so that a connect to it never completes. Every socket
is on 127.0.0.1. Writes "http tls black" ports to PORTFILE, then serves until
killed.
"""
import http.server
import socket
import ssl
import sys
import threading


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, *a, **k):
        super().__init__(*a, directory=sys.argv[1], **k)

    def log_message(self, *a):
        pass


def serve(tls):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


def black_hole():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(0)
    port = s.getsockname()[1]
    # Fill the accept queue: later SYNs are dropped, connects hang.
    keep = []
    for _ in range(4):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        keep.append(c)
    return s, keep, port


def main():
    http_port = serve(False)
    tls_port = serve(True)
    hole = black_hole()
    with open(sys.argv[4] + ".tmp", "w") as f:
        f.write(f"{http_port} {tls_port} {hole[2]}\n")
    import os
    os.rename(sys.argv[4] + ".tmp", sys.argv[4])
    threading.Event().wait()


main()
