"""`catalog-es events subscribe`: follow the change-event stream and print each event as a JSON line."""

from __future__ import annotations

import sys

import msgspec
import nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from projections.relay.binding import to_document

_encoder = msgspec.json.Encoder()


async def subscribe_events(
    url: str, stream: str, subject: str, *, from_start: bool, durable: str | None, count: int | None
) -> None:
    """An ordered ephemeral consumer, or with `durable` an acknowledged one that resumes where it stopped."""
    client = await nats.connect(url, name="catalog-es events subscribe", max_reconnect_attempts=-1)
    try:
        js = client.jetstream()
        deliver = DeliverPolicy.ALL if from_start else DeliverPolicy.NEW
        if durable:
            config = ConsumerConfig(deliver_policy=deliver, ack_policy=AckPolicy.EXPLICIT)
            subscription = await js.subscribe(subject, stream=stream, durable=durable, config=config, manual_ack=True)
        else:
            config = ConsumerConfig(deliver_policy=deliver)
            subscription = await js.subscribe(subject, stream=stream, ordered_consumer=True, config=config)
        seen = 0
        while count is None or seen < count:
            message = await subscription.next_msg(timeout=None)
            sys.stdout.buffer.write(_encoder.encode(to_document(message.headers, message.data)) + b"\n")
            sys.stdout.flush()
            if durable:
                await message.ack()
            seen += 1
    finally:
        await client.close()
