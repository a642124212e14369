"""`audit verify`: replay the log into a scratch schema and diff it, row by row, against the live read model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from catalog_es.store.database import Connection
from catalog_es.store.eventstore import log_head
from projections.checkpoints import load_checkpoint
from projections.registry import Projection
from projections.replay import current_schema, replay, scratch_schema


@dataclass
class TableDiff:
    """Rows only in the live table, and rows only in the replay."""

    table: str
    only_live: list[tuple[Any, ...]] = field(default_factory=list)
    only_replay: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass
class Verification:
    projection: str
    position: int
    diffs: list[TableDiff]

    @property
    def identical(self) -> bool:
        return not any(d.only_live or d.only_replay for d in self.diffs)


async def verify_projection(conn: Connection, projection: Projection) -> Verification:
    """Compare at one snapshot: inline models against the log head, process ones against their checkpoint.

    Runs in a REPEATABLE READ transaction that is rolled back, so the scratch schema never outlives it.
    Unlike the projector and the rebuild, it reads every event, not only the projection's types: so it also checks
    the log for holes, and its replay is filtered by `project` (in Python) where projectors and rebuilds were
    filtered by the store (in SQL): the two filters disagreeing shows up as a difference.
    """
    result = Verification(projection.name, 0, [])
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        live = await current_schema(conn)
        until = await log_head(conn) if projection.inline else await load_checkpoint(conn, projection.name)
        async with scratch_schema(conn, projection, purpose="verify") as scratch:
            result.position = await replay(conn, projection.project, until, batch=5000)
            for table in projection.tables:
                rows = projection.compared.get(table, "SELECT * FROM {}")
                result.diffs.append(TableDiff(table, await _except(conn, rows, live, scratch, table), []))
                result.diffs[-1].only_replay = await _except(conn, rows, scratch, live, table)
        raise psycopg.Rollback
    return result


async def _except(conn: Connection, rows: str, left: str, right: str, table: str) -> list[tuple[Any, ...]]:
    """`rows` of `table` (its `{}`) in schema `left` but not in `right`."""
    query = sql.SQL("{} EXCEPT ALL {} ORDER BY 1").format(
        sql.SQL(rows).format(sql.Identifier(left, table)), sql.SQL(rows).format(sql.Identifier(right, table))
    )
    cursor = await conn.execute(query)
    return list(await cursor.fetchall())
