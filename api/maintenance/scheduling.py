"""The trigger evaluation the worker runs before it claims: the policies' scheduler step on the maintenance model."""

from __future__ import annotations

from commands.context import CommandContext
from commands.maintenance_schedule import schedule_due_jobs
from projections.maintenance.queries import MaintenanceReadModel

_STATE = MaintenanceReadModel()


async def schedule_due(ctx: CommandContext) -> int:
    """Queue what the triggers make due now (never twice per table and type); how many were queued."""
    return len(await schedule_due_jobs(ctx, _STATE))
