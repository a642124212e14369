"""Schedule an import of another catalog (issue 32): the source's properties sealed in the secrets store, a task on
queue `catalog_import` naming them by id only (its payload is an event: no credential may enter it)."""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext
from commands.import_sources import check_source_reachable
from commands.task_handlers import CATALOG_IMPORT
from commands.tasks import NewTask, schedule_task

MAX_ATTEMPTS = 3  # an import resumes where it stopped: a few attempts ride out a source that was briefly away


class ImportPayload(msgspec.Struct, frozen=True, rename="kebab", kw_only=True):
    """What the task records: how events name the source, where its properties are sealed, what to take, who asked."""

    source: str
    secret_id: uuid.UUID
    catalog_name: str
    namespaces: list[list[str]]
    actor: str


class ImportCatalog(msgspec.Struct, frozen=True, kw_only=True):
    warehouse_id: uuid.UUID
    properties: dict[str, str]  # the source's pyiceberg catalog properties (secrets among them)
    source: str  # the label events carry (never a credential)
    catalog_name: str
    namespaces: list[list[str]]
    metadata: EventMetadata


async def handle_import_catalog(command: ImportCatalog, ctx: CommandContext) -> uuid.UUID:
    """Seal the properties and queue the import in one transaction; the task's id.

    Raises:
        NoSuchWarehouseError, WarehouseInactiveError: not an active warehouse.
        BadRequestError: a host or file the server may not open (commands/import_sources.py); no secrets store to
            keep the source's properties in.
    """
    await ctx.warehouse(command.warehouse_id)
    await check_source_reachable(ctx, command.properties)
    if ctx.secrets is None:
        raise BadRequestError(
            "Importing through the API needs a secrets key (CATALOG_ES__SECRETS_KEY) to seal the source's properties"
        )
    async with ctx.store.transaction(command.metadata, serialised=False) as tx:
        sealed = await ctx.secrets.put(tx.conn, dict(command.properties))
        payload = ImportPayload(
            source=command.source,
            secret_id=sealed.id,
            catalog_name=command.catalog_name,
            namespaces=command.namespaces,
            actor=command.metadata.actor,
        )
        task = NewTask(
            queue=CATALOG_IMPORT,
            warehouse_id=command.warehouse_id,
            entity_type="warehouse",
            entity_id=command.warehouse_id,
            payload=msgspec.to_builtins(payload),
            max_attempts=MAX_ATTEMPTS,
        )
        return await schedule_task(tx, ctx, task)
