"""The relay's JetStream side: connect, ensure the stream, read where it ends, publish a fenced batch."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import msgspec
import nats
import structlog
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, Header, PubAck, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError

from projections.relay.binding import MSG_ID_HEADER, NatsMessage, message_position
from projections.relay.config import StreamOptions

_log = structlog.get_logger("catalog_es.relay")
_WRONG_LAST_SEQUENCE = 10071  # JetStream error code: Nats-Expected-Last-Sequence did not match


class StreamTail(msgspec.Struct, frozen=True):
    """The stream's last sequence and, if that message is still stored, the position and id it carries."""

    last_seq: int
    position: int | None = None
    msg_id: str | None = None


class PublishResult(msgspec.Struct, frozen=True):
    last_seq: int
    duplicates: int


class StreamMovedError(Exception):
    """Someone else appended to the stream (another relay?) since the batch was planned."""


class StreamMismatchError(Exception):
    """The stream exists but does not capture the relay's subjects: fix its configuration by hand."""


class NatsUnavailableError(Exception):
    """The connection closed, or acks did not arrive in time."""


class JetStreamPublisher:
    """One NATS connection without automatic reconnects: the relay decides when to retry and from where."""

    def __init__(self, client: Client, ack_timeout: float) -> None:
        self._nc = client
        self._js: JetStreamContext = client.jetstream(timeout=ack_timeout)
        self._ack_timeout = ack_timeout
        self._closed = asyncio.Event()

    @classmethod
    async def connect(cls, url: str, *, name: str, ack_timeout: float = 10.0) -> JetStreamPublisher:
        closed = asyncio.Event()

        async def on_closed() -> None:
            closed.set()

        async def on_error(exc: Exception) -> None:
            _log.debug("relay.nats_error", error=repr(exc))

        # nats-py retries a refused server inside connect() despite allow_reconnect=False (up to
        # max_reconnect_attempts, reconnect_time_wait apart): two quick tries, then NoServersError.
        client = await nats.connect(
            url,
            name=name,
            allow_reconnect=False,
            max_reconnect_attempts=1,
            reconnect_time_wait=0,
            connect_timeout=2,
            closed_cb=on_closed,
            disconnected_cb=on_closed,
            error_cb=on_error,
        )
        publisher = cls(client, ack_timeout)
        publisher._closed = closed
        return publisher

    @property
    def max_payload(self) -> int:
        return int(self._nc.max_payload)

    async def close(self) -> None:
        if not self._nc.is_closed:
            await self._nc.close()

    async def ensure_stream(self, options: StreamOptions) -> None:
        """Create the stream if it is missing; an existing one is used as it is if it captures our subjects.

        Raises:
            StreamMismatchError: the existing stream does not list every subject the relay publishes to.
        """
        try:
            info = await self._js.stream_info(options.name)
            missing = [subject for subject in options.subjects if subject not in (info.config.subjects or [])]
            if missing:
                raise StreamMismatchError(f"Stream {options.name} exists but does not capture {missing}")
        except NotFoundError:
            await self._js.add_stream(
                StreamConfig(
                    name=options.name,
                    subjects=options.subjects,
                    retention=RetentionPolicy.LIMITS,
                    discard=DiscardPolicy.OLD,
                    storage=StorageType(options.storage),
                    duplicate_window=options.duplicate_window_seconds,
                    max_age=options.max_age_seconds,
                    max_bytes=options.max_bytes,
                    num_replicas=options.replicas,
                )
            )

    async def tail(self, stream: str) -> StreamTail:
        last_seq = (await self._js.stream_info(stream)).state.last_seq
        if not last_seq:
            return StreamTail(last_seq=0)
        try:
            message = await self._js.get_msg(stream, seq=last_seq)
        except NotFoundError:  # expired (max_age) or deleted: only the checkpoint can tell
            return StreamTail(last_seq=last_seq)
        headers = message.headers or {}
        return StreamTail(
            last_seq=last_seq, position=message_position(headers, message.data), msg_id=headers.get(MSG_ID_HEADER)
        )

    async def publish(self, messages: Sequence[NatsMessage], *, expected_last_seq: int | None) -> PublishResult:
        """Publish in order without waiting, then await every ack.

        With `expected_last_seq` each message must land right after the previous one
        (`Nats-Expected-Last-Sequence`), so the stream can never hold a hole or a foreign message
        in between; a mismatch raises `StreamMovedError` and nothing after it is stored.

        Raises:
            StreamMovedError: the stream is not where the batch expected it.
            NatsUnavailableError: the connection closed or the acks timed out.
        """
        futures: list[asyncio.Future[PubAck]] = []
        for index, message in enumerate(messages):
            headers = message.headers
            if expected_last_seq is not None:
                headers = {**headers, Header.EXPECTED_LAST_SEQUENCE: str(expected_last_seq + index)}
            futures.append(await self._js.publish_async(message.subject, message.payload, headers=headers))
        acks_done: asyncio.Future[list[PubAck | BaseException]] = asyncio.gather(*futures, return_exceptions=True)
        closed = asyncio.ensure_future(self._closed.wait())
        waiters: list[asyncio.Future[Any]] = [acks_done, closed]
        try:
            await asyncio.wait(waiters, timeout=self._ack_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if not acks_done.done():
            acks_done.cancel()
            raise NatsUnavailableError("JetStream acks did not arrive (connection lost or timed out)")
        acks: list[PubAck] = []
        for ack in acks_done.result():
            if isinstance(ack, BadRequestError) and ack.err_code == _WRONG_LAST_SEQUENCE:
                raise StreamMovedError(str(ack.description))
            if isinstance(ack, BaseException):
                raise ack
            acks.append(ack)
        duplicates = sum(1 for ack in acks if ack.duplicate)
        last_seq = max((ack.seq for ack in acks if ack.seq is not None), default=expected_last_seq or 0)
        return PublishResult(last_seq=last_seq, duplicates=duplicates)
