"""The NATS relay: one leader per stream publishes the event log to JetStream in order, checkpointing after acks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import nats.errors
import psycopg
import structlog
from eventsourcing.persistence import Tracking

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import (
    RecordedEvent,
    event_time,
    log_head,
    read_events,
)
from projections.checkpoints import advance_checkpoint, load_relay_checkpoint, try_lead
from projections.follow import LogFollower, next_batch
from projections.relay.binding import NatsMessage, entity_and_action, to_message
from projections.relay.config import RelayConfig
from projections.relay.jetstream import (
    JetStreamPublisher,
    NatsUnavailableError,
    StreamMovedError,
    StreamTail,
)
from projections.relay.lakekeeper import LAKEKEEPER_TYPES, TabularNames, lakekeeper_id, lakekeeper_message
from projections.relay.metrics import RelayMetrics

_log = structlog.get_logger("catalog_es.relay")
_NATS_ERRORS = (nats.errors.Error, NatsUnavailableError, OSError, TimeoutError)


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
        if config.url is None:
            raise ValueError("The relay needs a NATS url (RelayConfig.at)")
        self._url, self._config = config.url, config
        self._follower = LogFollower(dsn, "catalog-es relay", poll_seconds=config.poll_seconds, retry=(psycopg.Error,))
        self.metrics = metrics or RelayMetrics()
        self.metrics.relay = config.stream

    async def run(self) -> None:
        """Lead or stand by, forever (until cancelled); database and NATS failures are retried.

        Raises:
            RelayConflictError: the stream holds another log's events; publishing would corrupt it.
            StreamMismatchError: the stream exists without the relay's subjects.
        """
        backoff = _Backoff(self._config.backoff_max_seconds)

        def lost(_: Exception) -> None:
            self.metrics.leader = False
            self.metrics.errors_total += 1

        await self._follower.run(self._lead, listen=False, delay=backoff.next, on_error=lost)

    async def _lead(self, conn: Connection) -> None:
        standing_by = False
        while not await try_lead(conn, self._config.stream):
            if not standing_by:
                _log.info("relay.standby", stream=self._config.stream)
                standing_by = True
            await asyncio.sleep(self._config.standby_retry_seconds)
        self.metrics.leader = True
        _log.info("relay.leading", stream=self._config.stream)
        await self._follower.listen(conn)
        backoff = _Backoff(self._config.backoff_max_seconds)
        try:
            while True:
                try:
                    publisher = await JetStreamPublisher.connect(
                        self._url, name="catalog-es relay", ack_timeout=self._config.ack_timeout_seconds
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
            events = (await next_batch(conn, after, config.batch_size)).events  # every event: published in order
            if not events:
                self.metrics.head_position, self.metrics.oldest_unpublished_time = after, None
                if (head := await self._follower.wait(conn)) is not None:
                    self.metrics.head_position = max(self.metrics.head_position, head)
                continue
            self.metrics.oldest_unpublished_time = events[0].time
            messages = await self._messages(conn, events, names, publisher.max_payload)
            if skip_through is not None:
                messages, skip_through = _skip_through(messages, skip_through), None
            result = await publisher.publish(messages, expected_last_seq=last_seq)
            last_seq, after = result.last_seq, events[-1].position
            await advance_checkpoint(conn, Tracking(config.stream, after))
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
        if action in ("created", "registered", "renamed", "undropped"):  # the name it has after the event
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

    async def _observe_lag(self, conn: Connection) -> None:
        """While NATS is away the lag still grows: read the head and the oldest unpublished event's time."""
        self.metrics.head_position = await log_head(conn)
        if self.metrics.head_position > self.metrics.published_position:
            self.metrics.oldest_unpublished_time = await event_time(conn, self.metrics.published_position + 1)
