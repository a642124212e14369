"""A tiny `/health` listener for the processes without an HTTP API (worker, maintenance runner, projector).

It answers 200 while the process's event loop runs, which is what a liveness probe needs to know: a hung
loop (or a dead process) stops answering and the orchestrator restarts it. Any path gets the same answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TypeVar

_T = TypeVar("_T")
_OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):  # a probe that hangs up early is no error of ours
        await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        writer.write(_OK)
        await writer.drain()
    writer.close()


async def with_health(work: Awaitable[_T], host: str, port: int | None) -> _T:
    """Await `work` with the health listener on `host:port` (no listener when `port` is None)."""
    if port is None:
        return await work
    server = await asyncio.start_server(_answer, host, port)
    try:
        return await work
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await server.wait_closed()
