"""Hand-off: release a table or view to another catalog. It leaves this catalog and nothing else happens.

Unlike a drop it never purges and never applies the warehouse's soft-delete profile (the files now belong to
the catalog it went to, which may be serving them already); its location claim goes with its read-model row.
The event is the kind's ordinary drop (`purge-requested: false`), carrying the CloudEvents extension
`releasedto` with where it went, so every projection and consumer already knows what it means.
"""

from __future__ import annotations

import uuid

import msgspec

from catalog_es.identifiers import Namespace
from catalog_es.state import TabularKindName
from catalog_es.store.eventstore import EventMetadata
from catalog_es.tabular_kind import kind_named
from commands.context import CommandContext
from commands.protection import require_unprotected_tabular


class ReleaseTabular(msgspec.Struct, frozen=True):
    warehouse_id: uuid.UUID
    tabular_id: uuid.UUID
    namespace: Namespace
    name: str
    kind: TabularKindName
    released_to: str
    metadata: EventMetadata


async def handle_release(cmd: ReleaseTabular, ctx: CommandContext) -> None:
    """Raises: NoSuchTableError / NoSuchViewError (gone, or renamed meanwhile), ProtectedError."""
    kind = kind_named(cmd.kind)
    metadata = msgspec.structs.replace(cmd.metadata, released_to=cmd.released_to)
    async with ctx.store.transaction(metadata) as tx:
        row = await kind.row(ctx.state, tx.conn, cmd.warehouse_id, cmd.namespace, cmd.name)
        if row is None or row.id != cmd.tabular_id:
            raise kind.missing(cmd.namespace, cmd.name)
        await require_unprotected_tabular(ctx, tx.conn, row.kind, row.id, f"{cmd.namespace}.{row.name}", force=False)
        await tx.append(kind.dropped(row.id, row.warehouse_id, purge=False), expected_version=row.version)
