"""The NATS relay: one leader per stream publishes the event log to JetStream in order, checkpointing after acks."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

import msgspec
import nats.errors
import psycopg
import structlog

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import NOTIFY_CHANNEL, RecordedEvent, check_contiguous, read_events
from projections.checkpoints import advance_checkpoint, event_time, load_relay_checkpoint, log_head, try_lead
from projections.relay.binding import ContentMode, NatsMessage, entity_and_action, to_message
from projections.relay.jetstream import (
    JetStreamPublisher,
    NatsUnavailableError,
    StreamMovedError,
    StreamOptions,
    StreamTail,
)
from projections.relay.lakekeeper import LAKEKEEPER_TYPES, TabularNames, lakekeeper_id, lakekeeper_message
from projections.relay.metrics import RelayMetrics

_log = structlog.get_logger("catalog_es.relay")
_NATS_ERRORS = (nats.errors.Error, NatsUnavailableError, OSError, TimeoutError)


class RelayConfig(msgspec.Struct, frozen=True):
    """Where and how to publish; the relay's name (checkpoint row, leadership lock) is the stream's."""

    nats_url: str
    stream: str = "CATALOG_EVENTS"
    subject_prefix: str = "catalog"
    content_mode: ContentMode = "binary"
    lakekeeper_compat: bool = False
    lakekeeper_subject: str = "catalog.lakekeeper"
    duplicate_window_seconds: float = 120.0
    max_age_seconds: float = 0.0
    storage: str = "file"
    batch_size: int = 500
    poll_seconds: float = 1.0
    standby_retry_seconds: float = 1.0
    backoff_max_seconds: float = 5.0
    ack_timeout_seconds: float = 10.0

    def stream_options(self) -> StreamOptions:
        subjects = [f"{self.subject_prefix}.>"]
        if self.lakekeeper_compat and not self.lakekeeper_subject.startswith(f"{self.subject_prefix}."):
            subjects.append(self.lakekeeper_subject)
        window = self.duplicate_window_seconds
        if self.max_age_seconds:  # JetStream refuses a dedup window longer than the retention
            window = min(window, self.max_age_seconds)
        return StreamOptions(
            name=self.stream,
            subjects=subjects,
            duplicate_window_seconds=window,
            max_age_seconds=self.max_age_seconds,
            storage=self.storage,
        )


class RelayConflictError(Exception):
    """The stream ends with a message this log never produced: another catalog, or a restored database."""


class _Backoff:
    def __init__(self, maximum: float) -> None:
        self._maximum, self._next = maximum, 0.1

    def reset(self) -> None:
        self._next = 0.1

    def next(self) -> float:
        delay, self._next = self._next, min(self._maximum, self._next * 2)
        return delay


def _skip_through(messages: list[NatsMessage], msg_id: str) -> list[NatsMessage]:
    for index, message in enumerate(messages):
        if message.msg_id == msg_id:
            return messages[index + 1 :]
    raise RelayConflictError(f"message {msg_id} is not one of position {messages[0].position}'s")


class Relay:
    """At-least-once delivery with an exactly-once effect on the stream.

    Leadership: a session-level advisory lock on a dedicated connection (standbys retry). Resume:
    after the larger of the checkpoint and the position in the stream's last message, so even an
    outage longer than the dedup window cannot duplicate. Each batch is fenced with
    `Nats-Expected-Last-Sequence`, and the checkpoint advances only after every ack.
    """

    def __init__(self, dsn: str, config: RelayConfig, *, metrics: RelayMetrics | None = None) -> None:
        self._dsn = dsn
        self._config = config
        self.metrics = metrics or RelayMetrics()
        self.metrics.relay = config.stream

    async def run(self) -> None:
        """Lead or stand by, forever (until cancelled); database and NATS failures are retried.

        Raises:
            RelayConflictError: the stream holds another log's events; publishing would corrupt it.
            StreamMismatchError: the stream exists without the relay's subjects.
        """
        backoff = _Backoff(self._config.backoff_max_seconds)
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self._dsn, autocommit=True, application_name=f"catalog-es relay {os.getpid()}"
                )
                async with conn:
                    await self._lead(conn)
            except psycopg.Error as exc:
                self.metrics.leader = False
                self.metrics.errors_total += 1
                _log.warning("relay.database_unavailable", error=str(exc))
                await asyncio.sleep(backoff.next())

    async def _lead(self, conn: Connection) -> None:
        standing_by = False
        while not await try_lead(conn, self._config.stream):
            if not standing_by:
                _log.info("relay.standby", stream=self._config.stream)
                standing_by = True
            await asyncio.sleep(self._config.standby_retry_seconds)
        self.metrics.leader = True
        _log.info("relay.leading", stream=self._config.stream)
        await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
        backoff = _Backoff(self._config.backoff_max_seconds)
        try:
            while True:
                try:
                    publisher = await JetStreamPublisher.connect(
                        self._config.nats_url, name="catalog-es relay", ack_timeout=self._config.ack_timeout_seconds
                    )
                    try:
                        await self._follow(conn, publisher, backoff)
                    finally:
                        self.metrics.nats_connected = False
                        await publisher.close()
                except StreamMovedError as exc:
                    _log.warning("relay.stream_moved", error=str(exc))
                except _NATS_ERRORS as exc:
                    self.metrics.errors_total += 1
                    _log.warning("relay.nats_unavailable", error=repr(exc))
                await self._observe_lag(conn)
                await asyncio.sleep(backoff.next())
        finally:
            self.metrics.leader = False

    async def _follow(self, conn: Connection, publisher: JetStreamPublisher, backoff: _Backoff) -> None:
        config = self._config
        await publisher.ensure_stream(config.stream_options())
        tail = await publisher.tail(config.stream)
        checkpoint = await load_relay_checkpoint(conn, config.stream)
        after, skip_through = await self._resume_point(conn, checkpoint, tail)
        last_seq, names = tail.last_seq, TabularNames()
        self.metrics.nats_connected, self.metrics.published_position = True, after
        _log.info("relay.resumed", checkpoint=checkpoint, stream_position=tail.position, after=after)
        backoff.reset()
        while True:
            events = await read_events(conn, after=after, limit=config.batch_size)
            if not events:
                self.metrics.head_position, self.metrics.oldest_unpublished_time = after, None
                await self._wait_for_commits(conn)
                continue
            check_contiguous(after, events)
            self.metrics.oldest_unpublished_time = events[0].time
            messages = await self._messages(conn, events, names, publisher.max_payload)
            if skip_through is not None:
                messages, skip_through = _skip_through(messages, skip_through), None
            result = await publisher.publish(messages, expected_last_seq=last_seq)
            last_seq, after = result.last_seq, events[-1].position
            await advance_checkpoint(conn, config.stream, after)
            self.metrics.record_published(after, len(messages), result.duplicates)
            if len(events) == config.batch_size:
                self.metrics.head_position = await log_head(conn)

    async def _resume_point(self, conn: Connection, checkpoint: int, tail: StreamTail) -> tuple[int, str | None]:
        """Resume after max(checkpoint, the stream's last position); within a position, after its last message."""
        if tail.position is None:
            return checkpoint, None
        found = await read_events(conn, after=tail.position - 1, limit=1)
        ours = (
            found
            and found[0].position == tail.position
            and tail.msg_id in {str(found[0].id), lakekeeper_id(found[0].id)}
        )
        if not ours:
            raise RelayConflictError(
                f"Stream {self._config.stream} ends with message {tail.msg_id} at position {tail.position},"
                " which is not this catalog's event there: another catalog publishes to it, or the database"
                " was restored. Use another stream name, or delete the stream."
            )
        if tail.position <= checkpoint:
            return checkpoint, None
        return tail.position - 1, tail.msg_id

    async def _messages(
        self, conn: Connection, events: Sequence[RecordedEvent], names: TabularNames, max_payload: int
    ) -> list[NatsMessage]:
        config, messages = self._config, []
        for event in events:
            message = to_message(event, prefix=config.subject_prefix, mode=config.content_mode)
            if len(message.payload) > max_payload // 2 and message.size + len(message.subject) > max_payload:
                message = to_message(event, prefix=config.subject_prefix, mode=config.content_mode, omit_data=True)
                self.metrics.data_omitted_total += 1
                _log.warning("relay.data_omitted", position=event.position, size=len(message.payload))
            messages.append(message)
            if config.lakekeeper_compat:
                if event.type in LAKEKEEPER_TYPES:
                    compatible = await self._lakekeeper_message(conn, event, names, max_payload)
                    if compatible is not None:
                        messages.append(compatible)
                names.observe(event)
        return messages

    async def _lakekeeper_message(
        self, conn: Connection, event: RecordedEvent, names: TabularNames, max_payload: int
    ) -> NatsMessage | None:
        data, before, action = event.data, event.position, entity_and_action(event.type)[1]
        previous = None
        if action not in ("created", "registered"):
            previous = await names.tabular(conn, event.stream_id, before=before)
        name = previous
        if action in ("created", "registered", "renamed"):
            name = await names.named(conn, str(data["namespace_id"]), str(data["name"]), before=before)
        if name is None:
            _log.warning("relay.lakekeeper_name_unknown", position=event.position)
            return None
        subject = self._config.lakekeeper_subject
        message = lakekeeper_message(event, subject=subject, name=name, previous=previous)
        if message.size + len(subject) > max_payload:
            self.metrics.data_omitted_total += 1
            message = lakekeeper_message(event, subject=subject, name=name, previous=previous, omit_data=True)
        return message

    async def _wait_for_commits(self, conn: Connection) -> None:
        """Until a commit is notified, or the poll interval passes (a NOTIFY can be missed)."""
        async for notify in conn.notifies(timeout=self._config.poll_seconds, stop_after=1):
            if notify.payload.isdigit():
                self.metrics.head_position = max(self.metrics.head_position, int(notify.payload))

    async def _observe_lag(self, conn: Connection) -> None:
        """While NATS is away the lag still grows: read the head and the oldest unpublished event's time."""
        self.metrics.head_position = await log_head(conn)
        if self.metrics.head_position > self.metrics.published_position:
            self.metrics.oldest_unpublished_time = await event_time(conn, self.metrics.published_position + 1)
