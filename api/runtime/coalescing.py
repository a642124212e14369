"""uvicorn's httptools protocol with a response's writes coalesced: its headers and body leave in one send.

uvicorn writes a response's status line and headers as soon as the app starts the response, then its body:
two `send` system calls (and, with TCP_NODELAY, two segments) for every small JSON answer, a quarter of a
loadTable's CPU in the server. Here the writes made in one turn of the event loop are joined and written at
its end (or at once when the connection closes), so a response the app sends in one go is one `send`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _CoalescingTransport:
    """Delegates to the connection's transport; writes within one loop turn go out as one write."""

    __slots__ = ("_loop", "_pending", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport, self._loop = transport, loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(data)

    def _flush(self) -> None:
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending.clear()
        self._transport.write(data)

    def close(self) -> None:
        self._flush()  # the transport sends what it holds before it closes
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` writing through `_CoalescingTransport`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        coalescing = _CoalescingTransport(transport, self.loop)
        super().connection_made(coalescing)  # type: ignore[arg-type]
