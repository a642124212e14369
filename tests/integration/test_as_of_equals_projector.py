"""Property: the as-of index (engines' `warehouse@<time>`, operators' `audit as-of`) lists what replaying the catalog
projector up to the same position leaves in its tables, after any sequence of catalog changes."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql

from catalog_es.errors import CatalogError
from catalog_es.identifiers import Namespace
from catalog_es.store.database import Connection
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.create_view import CreateView, handle_create_view
from commands.namespaces import (
    CreateNamespace,
    DropNamespace,
    UpdateNamespaceProperties,
    handle_create_namespace,
    handle_drop_namespace,
    handle_update_namespace_properties,
)
from commands.tabular_lifecycle import (
    DropTable,
    DropView,
    RenameTable,
    RenameView,
    handle_drop_table,
    handle_drop_view,
    handle_rename_table,
    handle_rename_view,
)
from commands.undrop import UndropTabulars, UndropTarget, handle_undrop_tabulars
from commands.warehouses import UpdateDeleteProfile, handle_update_delete_profile
from projections.audit.as_of import NamespaceAsOf, TabularAsOf, listing_at
from projections.registry import CATALOG
from projections.replay import replay, scratch_schema
from tests.integration.conftest import META, Catalog, OpenCatalog
from tests.integration.test_rebuild import SCHEMA
from tests.integration.test_soft_delete import VIEW_VERSION

NAMESPACES = [Namespace(("a",)), Namespace(("b",)), Namespace(("a", "inner"))]
NAMES = ["t1", "t2", "T1"]  # names compare case-insensitively: `T1` and `t1` clash
_namespace = st.sampled_from(NAMESPACES)
_name = st.sampled_from(NAMES)
A, B = NAMESPACES[0], NAMESPACES[1]
# Every kind of change at least once, soft drops and undrops included, whatever the random examples draw.
EVERY_CHANGE: list[tuple[Any, ...]] = [
    ("create-namespace", A),
    ("create-namespace", B),
    ("create-table", A, "t1"),
    ("create-view", A, "t2"),
    ("commit-table", A, "t1"),
    ("rename-table", A, "t1", B, "t1"),
    ("drop-table", B, "t1"),
    ("undrop", 0),
    ("commit-table", B, "t1"),
    ("rename-view", A, "t2", B, "T1"),
    ("drop-view", A, "t2"),
    ("undrop", 0),
    ("update-namespace", B, "x"),
    ("drop-table", B, "t1"),
    ("create-table", B, "T1"),
    ("undrop", 0),
    ("drop-namespace", A),
]
OPERATIONS = st.one_of(
    st.tuples(st.just("create-namespace"), _namespace),
    st.tuples(st.just("update-namespace"), _namespace, st.sampled_from(["x", "y"])),
    st.tuples(st.just("drop-namespace"), _namespace),
    st.tuples(st.just("create-table"), _namespace, _name),
    st.tuples(st.just("commit-table"), _namespace, _name),
    st.tuples(st.just("rename-table"), _namespace, _name, _namespace, _name),
    st.tuples(st.just("drop-table"), _namespace, _name),
    st.tuples(st.just("create-view"), _namespace, _name),
    st.tuples(st.just("rename-view"), _namespace, _name, _namespace, _name),
    st.tuples(st.just("drop-view"), _namespace, _name),
    st.tuples(st.just("undrop"), st.integers(min_value=0, max_value=3)),
)


async def _run(catalog: Catalog, operation: tuple[Any, ...]) -> None:
    w, ctx, (kind, *args) = catalog.warehouse_id, catalog.ctx, operation
    if kind == "create-namespace":
        await handle_create_namespace(CreateNamespace(w, args[0], {"p": "0"}, META), ctx)
    elif kind == "update-namespace":
        await handle_update_namespace_properties(UpdateNamespaceProperties(w, args[0], {"p": args[1]}, [], META), ctx)
    elif kind == "drop-namespace":
        await handle_drop_namespace(DropNamespace(w, args[0], META), ctx)
    elif kind == "create-table":
        await handle_create_table(CreateTable(w, args[0], args[1], SCHEMA, META), ctx)
    elif kind == "commit-table":
        update = {"action": "set-properties", "updates": {"k": uuid.uuid4().hex}}
        await handle_commit_table(CommitTable(w, args[0], args[1], [], [update], META), ctx)
    elif kind == "rename-table":
        await handle_rename_table(RenameTable(w, args[0], args[1], args[2], args[3], META), ctx)
    elif kind == "drop-table":
        await handle_drop_table(DropTable(w, args[0], args[1], False, META), ctx)
    elif kind == "create-view":
        version = {**VIEW_VERSION, "default-namespace": list(args[0].parts)}
        await handle_create_view(CreateView(w, args[0], args[1], SCHEMA, version, META), ctx)
    elif kind == "rename-view":
        await handle_rename_view(RenameView(w, args[0], args[1], args[2], args[3], META), ctx)
    elif kind == "drop-view":
        await handle_drop_view(DropView(w, args[0], args[1], META), ctx)
    else:  # undrop the n-th soft-dropped table or view, if there is one
        async with catalog.pool.connection() as conn:
            cursor = await conn.execute("SELECT kind, id FROM deleted_tabulars ORDER BY deleted_at, id")
            hidden = await cursor.fetchall()
        if hidden:
            target_kind, target_id = hidden[args[0] % len(hidden)]
            targets = [UndropTarget(target_kind, target_id)]
            await handle_undrop_tabulars(UndropTabulars(w, targets, META), ctx)


async def _head(conn: Connection) -> int:
    cursor = await conn.execute("SELECT position FROM catalog_event_counter")
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def _projected(conn: Connection, position: int) -> tuple[list[Any], list[Any], list[Any]]:
    """The oracle: the catalog projector replayed up to `position` in a scratch schema, rolled back."""
    async with conn.transaction(force_rollback=True), scratch_schema(conn, CATALOG, purpose="oracle", unique=True):
        await replay(conn, CATALOG.project, position)
        cursor = await conn.execute(
            "SELECT id, warehouse_id, parts, properties FROM namespaces ORDER BY warehouse_id, key"
        )
        namespaces = [
            NamespaceAsOf(id=r[0], warehouse_id=r[1], namespace=list(r[2]), properties=dict(r[3]))
            for r in await cursor.fetchall()
        ]
        tabulars = []
        for relation in ("tables", "views"):
            query = sql.SQL(
                "SELECT t.id, t.warehouse_id, n.parts, t.name, t.metadata_location, t.metadata->'current-snapshot-id',"
                " t.metadata->'current-schema-id', t.metadata->'current-version-id'"
                " FROM {} t JOIN namespaces n ON n.id = t.namespace_id ORDER BY t.warehouse_id, n.key, t.name_key"
            ).format(sql.Identifier(relation))
            cursor = await conn.execute(query)
            tabulars.append(
                [
                    TabularAsOf(
                        id=r[0],
                        warehouse_id=r[1],
                        namespace=list(r[2]),
                        name=r[3],
                        metadata_location=r[4],
                        current_snapshot_id=r[5] if isinstance(r[5], int) and r[5] >= 0 else None,
                        current_schema_id=r[6] if isinstance(r[6], int) and r[6] >= 0 else None,
                        current_version_id=r[7] if isinstance(r[7], int) and r[7] >= 0 else None,
                    )
                    for r in await cursor.fetchall()
                ]
            )
    return namespaces, tabulars[0], tabulars[1]


@pytest.mark.timeout(600)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(soft_delete=True, operations=EVERY_CHANGE)
@example(soft_delete=False, operations=EVERY_CHANGE)
@given(soft_delete=st.booleans(), operations=st.lists(OPERATIONS, min_size=1, max_size=25))
def test_the_as_of_index_lists_what_the_projector_replayed_to_the_same_position(
    open_catalog: OpenCatalog, soft_delete: bool, operations: list[tuple[Any, ...]]
) -> None:
    """Examples share one database: each appends to the log the earlier ones left, so positions keep meaning."""

    async def scenario() -> None:
        async with open_catalog() as catalog, catalog.pool.connection() as conn:
            profile = {"type": "soft", "expiration-seconds": 3600} if soft_delete else {"type": "hard"}
            await handle_update_delete_profile(UpdateDeleteProfile(catalog.warehouse_id, profile, META), catalog.ctx)
            await conn.commit()
            positions = [await _head(conn)]
            for operation in operations:
                with contextlib.suppress(CatalogError):  # refused (a name taken ...): the log did not change
                    await _run(catalog, operation)
                positions.append(await _head(conn))
            for position in sorted(set(positions)):
                assert await listing_at(conn, position) == await _projected(conn, position), position

    asyncio.run(scenario())
