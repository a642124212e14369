"""A warehouse's server-side rebase mode (issue 19): the command, its event, the read model and the cache."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from catalog_es.errors import NoSuchWarehouseError
from catalog_es.metadata.rebase import RebaseMode
from commands.warehouses import UpdateServerSideRebase, handle_update_server_side_rebase
from projections.registry import CATALOG
from projections.verify import verify_projection
from tests.integration.conftest import META, Catalog, OpenCatalog

TYPE = "io.catalog-es.warehouse.server-side-rebase-updated.v1"


def test_warehouse_mode_is_projected_seen_through_the_cache_at_once_and_rebuilt_alike(
    open_catalog: OpenCatalog,
) -> None:
    async def scenario() -> tuple[list[RebaseMode | None], list[tuple[str | None, int]], bool]:
        async with open_catalog() as catalog:
            seen = [(await catalog.ctx.warehouse(catalog.warehouse_id)).server_side_rebase]  # now cached
            modes: tuple[RebaseMode | None, ...] = ("on", "off", None)
            for mode in modes:
                await _set(catalog, mode)
                seen.append((await catalog.ctx.warehouse(catalog.warehouse_id)).server_side_rebase)
            async with catalog.pool.connection() as conn:
                cursor = await conn.execute(
                    "SELECT data->>'mode', stream_version FROM catalog_events WHERE type = %s ORDER BY global_position",
                    (TYPE,),
                )
                recorded = list(await cursor.fetchall())
                verification = await verify_projection(conn, CATALOG)
            return seen, recorded, verification.identical

    seen, recorded, identical = asyncio.run(scenario())
    assert seen == [None, "on", "off", None]
    assert [mode for mode, _ in recorded] == ["on", "off", None]
    versions = [version for _, version in recorded]
    assert versions == list(range(versions[0], versions[0] + 3))  # each one moved the warehouse's stream on
    assert identical


def test_warehouse_mode_of_a_missing_warehouse_records_nothing(open_catalog: OpenCatalog) -> None:
    async def scenario() -> None:
        async with open_catalog() as catalog:
            with pytest.raises(NoSuchWarehouseError):
                await handle_update_server_side_rebase(UpdateServerSideRebase(uuid.uuid4(), "on", META), catalog.ctx)
            async with catalog.pool.connection() as conn:
                cursor = await conn.execute("SELECT count(*) FROM catalog_events WHERE type = %s", (TYPE,))
                assert await cursor.fetchone() == (0,)

    asyncio.run(scenario())


async def _set(catalog: Catalog, mode: RebaseMode | None) -> None:
    await handle_update_server_side_rebase(UpdateServerSideRebase(catalog.warehouse_id, mode, META), catalog.ctx)
