"""Real sockets on 127.0.0.1 that misbehave the ways model servers do."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def free_port() -> int:
    """Return a port on 127.0.0.1 that nothing listens on (connecting is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def hung_server() -> Iterator[tuple[str, list[socket.socket]]]:
    """Accept connections and never answer; yield the base URL and the connections."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(conn)  # held open, never read, never answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", accepted
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in accepted:
            conn.close()
        listener.close()


@contextmanager
def full_backlog() -> Iterator[str | None]:
    """Yield the URL of a listener whose accept queue is full (connecting hangs).

    Yields None when this kernel still completes connections beyond the backlog.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    address = listener.getsockname()
    fillers: list[socket.socket] = []
    try:
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            fillers.append(filler)
            try:
                filler.connect(address)
            except BlockingIOError:
                pass
        probe = socket.socket()
        probe.settimeout(0.5)
        try:
            probe.connect(address)
            hangs = False
        except TimeoutError:
            hangs = True
        except OSError:
            hangs = False
        finally:
            probe.close()
        yield f"http://127.0.0.1:{address[1]}/v1" if hangs else None
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


class _EchoingRefusal(BaseHTTPRequestHandler):
    """Answer every request with 401 and a body that echoes the credentials."""

    seen: list[dict[str, str]]
    secrets: list[str]

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        auth = self.headers.get("Authorization", "")
        self.seen.append({"path": self.path, "authorization": auth})
        body = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key provided: {auth.split()[-1]}. "
                    f"You sent {auth!r}; other secrets: {' '.join(self.secrets)}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST  # noqa: N815

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def echoing_401(secrets: list[str]) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """Serve 401s that echo the API key (and ``secrets``); yield URL and requests seen."""
    seen: list[dict[str, str]] = []
    handler = type("Handler", (_EchoingRefusal,), {"seen": seen, "secrets": secrets})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=2)
