"""Export the event log as an Iceberg table in one of the catalog's own warehouses, append-only and incremental.

Data files are written with pyiceberg; the commit goes through the catalog's own command handler, so
the export is itself an audited `table.committed` event. The last exported position is a table
property committed together with the data, so a re-run appends only newer events (and after no other
change nothing: not its own previous commit).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, cast

import msgspec
import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.metadata import TableMetadataUtil

from catalog_es.errors import NoSuchWarehouseError
from catalog_es.events import TableCommitted, current_type
from catalog_es.identifiers import NIL_PROJECT_ID, Namespace
from catalog_es.state import WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata, RecordedEvent, read_events
from commands.commit_table import CommitTable, handle_commit_table
from commands.context import CommandContext
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from projections.catalog.queries import CatalogReadModel
from projections.cloudevents import to_cloudevent

EXPORTED_POSITION = "catalog-es.exported-position"
_STRING_COLUMNS = ("id", "source", "type", "subject", "actor", "requestid", "stream_id", "commit_id", "data")
SCHEMA: dict[str, Any] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "position", "type": "long", "required": False},
        {"id": 2, "name": "time", "type": "timestamptz", "required": False},
        {"id": 3, "name": "stream_version", "type": "int", "required": False},
        *(
            {"id": 4 + offset, "name": name, "type": "string", "required": False}
            for offset, name in enumerate(_STRING_COLUMNS)
        ),
    ],
}
ARROW_SCHEMA = pa.schema(
    [
        pa.field("position", pa.int64()),
        pa.field("time", pa.timestamp("us", tz="UTC")),
        pa.field("stream_version", pa.int32()),
        *(pa.field(name, pa.string()) for name in _STRING_COLUMNS),
    ]
)


class ExportResult(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    table: str
    exported: int
    from_position: int
    to_position: int


def event_rows(events: list[RecordedEvent]) -> pa.Table:
    """One row per event, from its CloudEvent form; `data` as a JSON string."""
    documents = [to_cloudevent(event) for event in events]
    columns: dict[str, list[Any]] = {
        "position": [doc.position for doc in documents],
        "time": [event.time for event in events],
        "stream_version": [event.stream_version for event in events],
        "id": [doc.id for doc in documents],
        "source": [doc.source for doc in documents],
        "type": [doc.type for doc in documents],
        "subject": [doc.subject for doc in documents],
        "actor": [doc.actor for doc in documents],
        "requestid": [doc.requestid for doc in documents],
        "stream_id": [event.stream_id for event in events],
        "commit_id": [str(event.commit_id) for event in events],
        "data": [msgspec.json.encode(doc.data).decode() for doc in documents],
    }
    return pa.Table.from_pydict(columns, schema=ARROW_SCHEMA)


class _CommandCommitter:
    """The slice of a pyiceberg catalog that `Table.append` uses, answered by the command handler."""

    def __init__(
        self, ctx: CommandContext, warehouse_id: uuid.UUID, loop: asyncio.AbstractEventLoop, meta: EventMetadata
    ) -> None:
        self._ctx, self._warehouse_id, self._loop, self._meta = ctx, warehouse_id, loop, meta

    def commit_table(self, table: Table, requirements: Any, updates: Any) -> CommitTableResponse:
        *namespace, name = table.name()
        command = CommitTable(
            self._warehouse_id,
            Namespace(tuple(namespace)),
            name,
            [json.loads(requirement.model_dump_json()) for requirement in requirements],
            [json.loads(update.model_dump_json()) for update in updates],
            self._meta,
        )
        result = asyncio.run_coroutine_threadsafe(handle_commit_table(command, self._ctx), self._loop).result()
        response = {"metadata": result.metadata, "metadata-location": result.metadata_location}
        return CommitTableResponse.model_validate(response)

    def _delete_old_metadata(self, *args: Any) -> None:
        """Metadata files stay: the log refers to every one of them."""


class ExportTarget(msgspec.Struct, frozen=True):
    """The table an export appends to: its warehouse, id, metadata and where that metadata lives."""

    warehouse: WarehouseRow
    table_id: uuid.UUID
    metadata: dict[str, Any]
    location: str | None

    def exported(self, key: str) -> int:
        """The position (or record id) the previous run exported up to, kept as a table property."""
        return int(self.metadata.get("properties", {}).get(key, "0"))


async def export_target(
    ctx: CommandContext,
    conn: Connection,
    *,
    warehouse: str,
    namespace: Namespace,
    table: str,
    schema: dict[str, Any],
    key: str,
    meta: EventMetadata,
) -> tuple[ExportTarget, bool]:
    """`warehouse.namespace.table`, created (with property `key` at 0) if needed; and whether it already existed.

    Raises:
        NoSuchWarehouseError: no warehouse by that name in the default project.
    """
    read_model = CatalogReadModel()
    row = await read_model.warehouse_by_name(conn, NIL_PROJECT_ID, warehouse)
    if row is None:
        raise NoSuchWarehouseError(f"Warehouse {warehouse!r} does not exist")
    if await read_model.namespace(conn, row.id, namespace) is None:
        await handle_create_namespace(CreateNamespace(row.id, namespace, {}, meta), ctx)
    existing = await read_model.table(conn, row.id, namespace, table)
    if existing is not None:
        return ExportTarget(row, existing.id, existing.metadata, existing.metadata_location), True
    created = await handle_create_table(CreateTable(row.id, namespace, table, schema, meta, properties={key: "0"}), ctx)
    table_id = uuid.UUID(str(created.metadata["table-uuid"]))
    return ExportTarget(row, table_id, created.metadata, created.metadata_location), False


async def append_export(
    ctx: CommandContext,
    target: ExportTarget,
    identifier: tuple[str, ...],
    rows: pa.Table,
    progress: dict[str, str],
    meta: EventMetadata,
) -> ExportTarget:
    """Append `rows` and set the `progress` properties in one commit, through the catalog's own command handler.

    Returns the target as committed (the next append builds on it)."""
    assert target.location is not None
    # The warehouse's own IO (its credential, never an ambient one); the location checked to be on its storage.
    io = await asyncio.to_thread((await ctx.storage(target.warehouse)).file_io, target.location)
    iceberg = Table(
        identifier=identifier,
        metadata=TableMetadataUtil.parse_obj(target.metadata),
        metadata_location=target.location,
        io=io,
        catalog=cast(Catalog, _CommandCommitter(ctx, target.warehouse.id, asyncio.get_running_loop(), meta)),
    )
    await asyncio.to_thread(_append, iceberg, rows, progress)
    metadata = json.loads(iceberg.metadata.model_dump_json())
    return msgspec.structs.replace(target, metadata=metadata, location=iceberg.metadata_location)


async def export_events(
    ctx: CommandContext, conn: Connection, *, warehouse: str, namespace: Namespace, table: str, meta: EventMetadata
) -> ExportResult:
    """Append the events not exported yet to `warehouse.namespace.table`, creating both if needed.

    Raises:
        NoSuchWarehouseError: no warehouse by that name in the default project.
        CommitFailedError: another export committed meanwhile.
    """
    target, existed = await export_target(
        ctx,
        conn,
        warehouse=warehouse,
        namespace=namespace,
        table=table,
        schema=SCHEMA,
        key=EXPORTED_POSITION,
        meta=meta,
    )
    after = target.exported(EXPORTED_POSITION)
    events = await read_events(conn, after=after)
    name = f"{warehouse}.{namespace}.{table}"
    own_stream = f"table-{target.table_id}" if existed else None
    if all(event.stream_id == own_stream and current_type(event.type) == TableCommitted.type_name for event in events):
        # Only the previous export's own commit is new: exporting it would commit again, and every run
        # would find one new event of its own making. It is exported with the next real change.
        return ExportResult(table=name, exported=0, from_position=after, to_position=after)
    if target.location is None:
        return ExportResult(table=name, exported=0, from_position=after, to_position=after)
    head = events[-1].position
    identifier = (*namespace.parts, table)
    await append_export(ctx, target, identifier, event_rows(events), {EXPORTED_POSITION: str(head)}, meta)
    return ExportResult(table=name, exported=len(events), from_position=after + 1, to_position=head)


def _append(table: Table, rows: pa.Table, progress: dict[str, str]) -> None:
    with table.transaction() as tx:
        tx.append(rows)
        tx.set_properties(progress)
