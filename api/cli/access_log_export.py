"""Export the access audit log as an Iceberg table of the catalog, like the history: append-only and incremental.

The last exported record id is a table property committed with the rows, so a re-run appends only newer
records (none: no commit). Large backlogs are appended in batches, one commit each, so memory stays bounded.
"""

from __future__ import annotations

from typing import Any, Final

import pyarrow as pa

from api.cli.audit_export import ExportResult, append_export, export_target
from catalog_es.identifiers import Namespace
from catalog_es.store.access_log import AccessRecord, read_access_log
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from commands.context import CommandContext

EXPORTED_RECORD = "catalog-es.exported-access-record"
_PAGE: Final = 10_000
_BATCH: Final = 100_000
_STRINGS: Final = ("actor", "request_id", "decision", "method", "path", "operation", "reason")
SCHEMA: Final[dict[str, Any]] = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False},
        {"id": 2, "name": "time", "type": "timestamptz", "required": False},
        {"id": 3, "name": "status", "type": "int", "required": False},
        *(
            {"id": 4 + offset, "name": name, "type": "string", "required": False}
            for offset, name in enumerate(_STRINGS)
        ),
    ],
}
ARROW_SCHEMA: Final = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("time", pa.timestamp("us", tz="UTC")),
        pa.field("status", pa.int32()),
        *(pa.field(name, pa.string()) for name in _STRINGS),
    ]
)


def record_rows(records: list[AccessRecord]) -> pa.Table:
    """One row per access record, its columns as in the access log."""
    columns: dict[str, list[Any]] = {
        "id": [r.id for r in records],
        "time": [r.time for r in records],
        "status": [r.status for r in records],
        **{name: [getattr(r, name) for r in records] for name in _STRINGS},
    }
    return pa.Table.from_pydict(columns, schema=ARROW_SCHEMA)


async def export_access_log(
    ctx: CommandContext, conn: Connection, *, warehouse: str, namespace: Namespace, table: str, meta: EventMetadata
) -> ExportResult:
    """Append the access records not exported yet to `warehouse.namespace.table`, creating both if needed.

    `from_position`/`to_position` of the result are record ids.

    Raises:
        NoSuchWarehouseError: no warehouse by that name in the default project.
        CommitFailedError: another export committed meanwhile.
    """
    target, _ = await export_target(
        ctx, conn, warehouse=warehouse, namespace=namespace, table=table, schema=SCHEMA, key=EXPORTED_RECORD, meta=meta
    )
    name, identifier = f"{warehouse}.{namespace}.{table}", (*namespace.parts, table)
    first = last = target.exported(EXPORTED_RECORD)
    exported = 0
    while target.location is not None:
        batch: list[AccessRecord] = []
        while len(batch) < _BATCH:
            page = await read_access_log(conn, after=last, limit=min(_PAGE, _BATCH - len(batch)))
            batch += page
            last = batch[-1].id if batch else last
            if not page:
                break
        if not batch:
            break
        target = await append_export(ctx, target, identifier, record_rows(batch), {EXPORTED_RECORD: str(last)}, meta)
        exported += len(batch)
    from_id = first + 1 if exported else first
    return ExportResult(table=name, exported=exported, from_position=from_id, to_position=last)
