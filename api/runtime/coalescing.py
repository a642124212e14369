"""uvicorn's httptools protocol with a response's writes coalesced: its headers and body leave in one send.

uvicorn writes a response's status line and headers as soon as the app starts the response, then its body:
two `send` system calls (and, with TCP_NODELAY, two segments) for every small JSON answer, a quarter of a
loadTable's CPU in the server. Here the writes made in one turn of the event loop are joined and written at
its end (at once when they reach 64 KiB or the connection closes), so a response the app sends in one go is one
`send`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_HELD_BYTES = 64 * 1024


class _CoalescingTransport:
    """Delegates to the connection's transport; writes within one loop turn go out as one write."""

    __slots__ = ("_loop", "_pending", "_pending_bytes", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport, self._loop = transport, loop
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= _HELD_BYTES:  # a large body goes now: the transport's flow control sees it at once
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        if len(pending) == 1:
            self._transport.write(pending[0])
        else:
            self._transport.writelines(pending)  # one send, the parts not copied together (uvloop: writev)

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
