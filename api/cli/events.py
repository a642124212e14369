"""`catalog-es events tail|subscribe`: the event log, or the NATS change-event stream, as CloudEvents JSON lines."""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer

from api.cli.session import DataDir, cli_connection, cli_settings, command_group, fail, until_signalled
from api.settings import Settings

events_cli = command_group("Read the event log.")


async def _tail(settings: Settings, limit: int | None) -> None:
    from catalog_es.store.eventstore import read_events  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    from projections.cloudevents import encode_structured  # noqa: PLC0415

    async with cli_connection(settings, migrate=False) as conn:
        for event in await read_events(conn, last=limit):
            sys.stdout.buffer.write(encode_structured(event) + b"\n")
    sys.stdout.flush()


@events_cli.command("tail")
def tail(
    data_dir: DataDir = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the newest N events")] = None,
) -> None:
    """Print the event log as CloudEvents JSON lines (structured mode), oldest first."""
    asyncio.run(_tail(cli_settings(data_dir), limit))


async def subscribe_events(
    url: str, stream: str, subject: str, *, from_start: bool, durable: str | None, count: int | None
) -> None:
    """An ordered ephemeral consumer, or with `durable` an acknowledged one that resumes where it stopped."""
    import msgspec  # noqa: PLC0415 - the CLI imports lazily (fast --help)
    import nats  # noqa: PLC0415
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy  # noqa: PLC0415

    from projections.relay.binding import to_document  # noqa: PLC0415

    encoder = msgspec.json.Encoder()
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
            sys.stdout.buffer.write(encoder.encode(to_document(message.headers, message.data)) + b"\n")
            sys.stdout.flush()
            if durable:
                await message.ack()
            seen += 1
    finally:
        await client.close()


@events_cli.command("subscribe")
def subscribe(
    data_dir: DataDir = None,
    subject: Annotated[str | None, typer.Option(help="Subject filter [default: <prefix>.>]")] = None,
    from_start: Annotated[bool, typer.Option("--from-start", help="Replay the stream from its first event")] = False,
    durable: Annotated[
        str | None, typer.Option(help="Durable consumer name: resume where the last run stopped")
    ] = None,
    count: Annotated[int | None, typer.Option(min=1, help="Exit after N events")] = None,
) -> None:
    """Print change events from NATS as CloudEvents JSON lines (structured mode) as they arrive."""
    from api.runtime.nats import nats_url  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    settings = cli_settings(data_dir)
    url, _ = nats_url(settings, start=False)
    if url is None:
        fail("No NATS: start `catalog-es serve` on the data dir or set CATALOG_ES__NATS__URL", 2)
    filter_subject = subject or f"{settings.nats.subject_prefix}.>"
    work = subscribe_events(
        url, settings.nats.stream, filter_subject, from_start=from_start, durable=durable, count=count
    )
    asyncio.run(until_signalled(work))
