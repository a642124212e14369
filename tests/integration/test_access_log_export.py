"""`catalog-es audit export-access-log`: the access log appended to an Iceberg table, only newer records each run."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyiceberg.table import StaticTable
from typer.testing import CliRunner, Result

from api.cli import cli
from api.cli.access_log_export import EXPORTED_RECORD
from catalog_es.identifiers import Namespace
from catalog_es.store.access_log import AccessRecord, read_access_log, record_access
from projections.catalog.queries import CatalogReadModel
from tests.integration.conftest import OpenCatalog

T0 = datetime(2026, 1, 31, 12, 0, tzinfo=UTC)


@pytest.fixture
def catalog_env(migrated_dsn: str, warehouse_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI pointed at the test database, with the test's file warehouse allowed."""
    monkeypatch.setenv("CATALOG_ES__PG_DSN", migrated_dsn)
    monkeypatch.setenv("CATALOG_ES__DATA_DIR", str(warehouse_dir.parent / "data"))
    monkeypatch.setenv("CATALOG_ES__FILE_STORAGE_ROOTS", str(warehouse_dir.parent))


def _record(n: int, decision: str = "denied") -> AccessRecord:
    return AccessRecord(
        time=T0 + timedelta(seconds=n),
        actor=f"oidc~user{n % 3}",
        request_id=f"req-{n}",
        decision=decision,
        status=403 if decision == "denied" else 200,
        method="DELETE" if decision == "denied" else "GET",
        path=f"/catalog/v1/w/namespaces/ns/tables/t{n}",
        operation="drop_table" if decision == "denied" else "load_table",
        reason=f"reason {n}",
    )


def _export() -> dict[str, object]:
    result: Result = CliRunner().invoke(cli, ["audit", "export-access-log", "--table", "access", "--json"])
    assert result.exit_code == 0, result.output
    exported: dict[str, object] = json.loads(result.stdout)
    return exported


def test_access_log_export_appends_only_newer_records(catalog_env: None, open_catalog: OpenCatalog) -> None:
    async def append(numbers: range) -> None:
        async with open_catalog() as catalog, catalog.pool.connection() as conn:
            for n in numbers:
                await record_access(conn, _record(n, "allowed" if n % 2 else "denied"))

    async def exported_table() -> tuple[StaticTable, list[AccessRecord]]:
        async with open_catalog() as catalog, catalog.pool.connection() as conn:
            row = await CatalogReadModel().table(conn, catalog.warehouse_id, Namespace(("audit",)), "access")
            assert row is not None
            assert row.metadata_location is not None
            return StaticTable.from_metadata(row.metadata_location), await read_access_log(conn, limit=1000)

    asyncio.run(append(range(5)))
    first = _export()
    assert (first["table"], first["exported"], first["from-position"]) == ("demo.audit.access", 5, 1)
    again = _export()
    assert again["exported"] == 0, "nothing new: no second copy"
    assert again["to-position"] == first["to-position"]

    asyncio.run(append(range(5, 8)))
    third = _export()
    assert third["exported"] == 3
    assert third["from-position"] == int(str(first["to-position"])) + 1

    table, records = asyncio.run(exported_table())
    rows = table.scan().to_arrow().sort_by("id").to_pylist()
    assert [r["id"] for r in rows] == [r.id for r in records], "every record once, none twice"
    assert table.properties[EXPORTED_RECORD] == str(records[-1].id)
    by_id = {r.id: r for r in records}
    for row in rows:
        source = by_id[row["id"]]
        assert (row["actor"], row["request_id"], row["decision"], row["status"]) == (
            source.actor,
            source.request_id,
            source.decision,
            source.status,
        )
        assert (row["method"], row["path"], row["operation"], row["reason"]) == (
            source.method,
            source.path,
            source.operation,
            source.reason,
        )
        assert row["time"] == source.time
    assert len(table.snapshots()) == 2, "one commit per run that found records"
