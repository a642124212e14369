"""A response's writes are coalesced into one send per loop turn, and a real uvicorn serves through the protocol."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn

from api.runtime.coalescing import CoalescingHttpToolsProtocol, _CoalescingTransport


class _Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.events: list[str] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))
        self.events.append("write")

    def close(self) -> None:
        self.events.append("close")

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


def test_writes_of_one_loop_turn_leave_as_one_write_and_later_ones_as_another() -> None:
    recording = _Recording()

    async def scenario() -> None:
        transport = _CoalescingTransport(recording, asyncio.get_running_loop())
        transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
        transport.write(b"{}")
        assert recording.writes == []
        await asyncio.sleep(0)
        transport.write(b"next")
        await asyncio.sleep(0)
        assert transport.get_extra_info("peername") == ("127.0.0.1", 1)  # everything else is the transport's

    asyncio.run(scenario())
    assert recording.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}", b"next"]


def test_a_large_body_is_sent_at_once() -> None:
    recording = _Recording()

    async def scenario() -> None:
        transport = _CoalescingTransport(recording, asyncio.get_running_loop())
        transport.write(b"headers")
        transport.write(b"x" * 70_000)
        assert recording.writes == [b"headers" + b"x" * 70_000]  # before the loop turn ends
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert len(recording.writes) == 1


def test_close_sends_what_is_pending_first() -> None:
    recording = _Recording()

    async def scenario() -> None:
        transport = _CoalescingTransport(recording, asyncio.get_running_loop())
        transport.write(b"a")
        transport.write(b"b")
        transport.close()
        await asyncio.sleep(0)

    asyncio.run(scenario())

    assert (recording.writes, recording.events) == ([b"ab"], ["write", "close"])


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = scope["path"].encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read_response(reader: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith((b"/first", b"/second")):
        chunk = reader.recv(4096)
        assert chunk, data
        data += chunk
    return data


def test_uvicorn_serves_keep_alive_requests_through_the_coalescing_protocol() -> None:
    first, second = asyncio.run(_serve_two_requests(_free_port()))

    assert first.startswith(b"HTTP/1.1 200 OK\r\n")
    assert first.endswith(b"\r\n\r\n/first")
    assert b"content-length: 6\r\n" in first
    assert second.startswith(b"HTTP/1.1 200 OK\r\n")
    assert second.endswith(b"\r\n\r\n/second")


async def _serve_two_requests(port: int) -> list[bytes]:
    config = uvicorn.Config(_app, host="127.0.0.1", port=port, http=CoalescingHttpToolsProtocol, log_config=None)
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers only a flag
        await asyncio.sleep(0.01)

    def exchange() -> list[bytes]:
        with socket.create_connection(("127.0.0.1", port)) as conn:
            answers = []
            for path in ("/first", "/second"):
                conn.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                answers.append(_read_response(conn))
            return answers

    try:
        return await asyncio.to_thread(exchange)
    finally:
        server.should_exit = True
        await serving
