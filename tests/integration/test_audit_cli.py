"""`catalog-es audit history|export` on a real catalog: names, readable changes, newest first, clear errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from api.cli import cli
from api.cli.audit_export import SCHEMA
from catalog_es.identifiers import Namespace
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import RenameTable, handle_rename_table
from tests.integration.conftest import META, OpenCatalog


@pytest.fixture
def catalog_env(migrated_dsn: str, warehouse_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI pointed at the test database, with the test's file warehouse allowed."""
    monkeypatch.setenv("CATALOG_ES__PG_DSN", migrated_dsn)
    monkeypatch.setenv("CATALOG_ES__DATA_DIR", str(warehouse_dir.parent / "data"))
    monkeypatch.setenv("CATALOG_ES__FILE_STORAGE_ROOTS", str(warehouse_dir.parent))


def _audit(*args: str) -> Result:
    return CliRunner().invoke(cli, ["audit", *args])


def _history_rows(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("│") and "position" not in line]


def test_history_shows_names_and_readable_changes_newest_first(catalog_env: None, open_catalog: OpenCatalog) -> None:
    async def given() -> None:
        async with open_catalog() as catalog:
            sales = Namespace(("sales",))
            await handle_create_namespace(CreateNamespace(catalog.warehouse_id, sales, {}, META), catalog.ctx)
            await handle_create_table(CreateTable(catalog.warehouse_id, sales, "orders", SCHEMA, META), catalog.ctx)
            rename = RenameTable(catalog.warehouse_id, sales, "orders", sales, "orders_v2", META)
            await handle_rename_table(rename, catalog.ctx)

    asyncio.run(given())

    shown = _audit("history", "--warehouse", "demo")
    assert shown.exit_code == 0, shown.output
    rows = _history_rows(shown.output)
    assert "table.renamed" in rows[0]
    assert "orders → orders_v2" in rows[0]
    assert "table sales.orders_v2" in rows[0]  # a name, not table-<uuid>
    assert "namespace sales" in shown.output
    assert "table-" not in shown.output

    newest = _audit("history", "--warehouse", "demo", "--limit", "1", "--json")
    assert newest.exit_code == 0, newest.output
    assert [json.loads(line)["type"] for line in newest.stdout.splitlines()] == ["io.catalog-es.table.renamed.v1"]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--warehouse", "no_such_warehouse", "no warehouse 'no_such_warehouse'"),
        ("--table", "sales.no_such_table", "no table 'sales.no_such_table'"),
        ("--namespace", "no.such", "no namespace 'no.such'"),
    ],
)
def test_history_of_an_unknown_name_is_an_error_not_an_empty_answer(
    catalog_env: None, open_catalog: OpenCatalog, option: str, value: str, message: str
) -> None:
    async def given() -> None:
        async with open_catalog():
            pass

    asyncio.run(given())

    result = _audit("history", option, value)

    assert result.exit_code == 1, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_export_run_again_without_changes_exports_nothing(catalog_env: None, open_catalog: OpenCatalog) -> None:
    async def given() -> None:
        async with open_catalog():
            pass

    asyncio.run(given())

    first = _audit("export", "--json")
    second = _audit("export", "--json")
    third = _audit("export", "--json")

    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["exported"] > 0
    assert json.loads(second.stdout)["exported"] == 0, "not its own previous commit"
    assert json.loads(third.stdout) == json.loads(second.stdout)
    appended = _audit("history", "--table", "audit.catalog_events", "--type", "table.committed")
    assert appended.exit_code == 0, appended.output
    assert f"+{json.loads(first.stdout)['exported']} rows in 1 files (append)" in appended.output
