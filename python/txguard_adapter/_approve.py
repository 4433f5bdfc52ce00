"""The approver command behind run(approver=callback): a relay, not a decider.

txguard runs `python3 -I .../_approve.py SOCKET` (the --approver CMD) with
the pending decision as one JSON object on stdin. This sends it to the
adapter's unix socket, where a thread of the run() that started txguard
calls the callback, and prints the one-line answer it gets back. Any error
(no socket, no answer, more than one line) exits non-zero without printing,
so txguard denies the call and says why. Standard library only; it imports
nothing from the package, so it runs from its path.
"""

import socket
import sys
from typing import List

# The question is small (argv, paths); bound what is relayed either way.
_LIMIT = 1 << 20


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    size = 0
    while True:
        data = sock.recv(65536)
        if not data:
            return b"".join(chunks)
        size += len(data)
        if size > _LIMIT:
            raise ValueError("the answer is too long")
        chunks.append(data)


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: _approve.py SOCKET (run by txguard as --approver)", file=sys.stderr)
        return 2
    try:
        question = sys.stdin.buffer.read(_LIMIT + 1)
        if len(question) > _LIMIT:
            raise ValueError("the question is too long")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(argv[1])
            sock.sendall(question)
            sock.shutdown(socket.SHUT_WR)
            answer = _read_all(sock)
        line = answer.decode("utf-8").strip("\n")
        if not line or "\n" in line:
            raise ValueError("the adapter sent no one-line answer")
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        return 0
    except (OSError, ValueError) as e:
        print(f"txguard_adapter approver: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
