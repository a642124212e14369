"""Record what the Spark maintenance worker does to a table: a job started, a job finished with its figures."""

from __future__ import annotations

from catalog_es.events.maintenance import MaintenanceJobEvent
from catalog_es.maintenance.jobs import MAINTENANCE_ACTOR
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext

MAINTENANCE_METADATA = EventMetadata(actor=MAINTENANCE_ACTOR)


async def record_maintenance_job(ctx: CommandContext, event: MaintenanceJobEvent) -> None:
    """Append `event` to the table's maintenance stream, actor `system:maintenance`.

    The stream is the table's own maintenance stream, never the table's: recording a job never makes a
    user's concurrent commit fail. Serialised, so reading the stream's version and appending cannot race.
    """
    async with ctx.store.transaction(MAINTENANCE_METADATA) as tx:
        await tx.append(event, expected_version=await tx.stream_version(event.stream_id))
