"""A hostile "S3 endpoint" on loopback: counts connections, records requests, answers a secret-looking error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "TOPSECRET-internal-admin-token-4f9d1c"


@dataclass
class HostileEndpoint:
    """What the endpoint saw: one entry per accepted connection, the headers of each request."""

    url: str
    connections: list[str] = field(default_factory=list)
    requests: list[dict[str, str]] = field(default_factory=list)


def _handler(seen: HostileEndpoint, code: str) -> type[BaseHTTPRequestHandler]:
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
        f"<Message>{SECRET} leaked from the internal network</Message>"
        f"<Resource>{SECRET}</Resource><RequestId>{SECRET}</RequestId></Error>"
    ).encode()

    class Hostile(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            seen.connections.append(str(self.client_address))
            super().setup()

        def _answer(self) -> None:
            seen.requests.append(dict(self.headers.items()))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(403, SECRET)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("x-amz-error-message", SECRET)
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer  # noqa: N815 - http.server's names

        def log_message(self, format: str, *args: object) -> None:
            return

    return Hostile


@contextmanager
def hostile_endpoint(host: str = "127.0.0.1", code: str = "AccessDenied") -> Iterator[HostileEndpoint]:
    """Serve on a free port of a loopback `host` (127.0.0.0/8 only) until the block ends."""
    assert host.startswith("127."), "tests address loopback only"
    seen = HostileEndpoint(url="")
    server = ThreadingHTTPServer((host, 0), _handler(seen, code))
    seen.url = f"http://{host}:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
