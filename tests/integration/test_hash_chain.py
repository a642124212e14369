"""`catalog-es audit verify` proves the event log and the access log unaltered: tamper with one row, it fails."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner, Result

from api.cli import cli
from api.cli.audit_export import SCHEMA
from catalog_es.identifiers import Namespace
from catalog_es.store.access_log import AccessRecord, record_access
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import RenameTable, handle_rename_table
from projections.registry import LOG_CHAIN
from projections.runner import ProjectorRunner
from tests.integration.conftest import META, OpenCatalog


@pytest.fixture
def chained_catalog(
    migrated_dsn: str, warehouse_dir: Path, open_catalog: OpenCatalog, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A catalog with a few events and access records, all linked; the CLI pointed at it. Returns the DSN."""
    monkeypatch.setenv("CATALOG_ES__PG_DSN", migrated_dsn)
    monkeypatch.setenv("CATALOG_ES__DATA_DIR", str(warehouse_dir.parent / "data"))
    monkeypatch.setenv("CATALOG_ES__FILE_STORAGE_ROOTS", str(warehouse_dir.parent))

    async def given() -> None:
        async with open_catalog() as catalog:
            sales = Namespace(("sales",))
            await handle_create_namespace(CreateNamespace(catalog.warehouse_id, sales, {}, META), catalog.ctx)
            await handle_create_table(CreateTable(catalog.warehouse_id, sales, "orders", SCHEMA, META), catalog.ctx)
            rename = RenameTable(catalog.warehouse_id, sales, "orders", sales, "orders_v2", META)
            await handle_rename_table(rename, catalog.ctx)
        async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
            while await ProjectorRunner(migrated_dsn, LOG_CHAIN).step(conn):
                pass
            for actor in ("user:alice", "user:bob", "user:carol"):
                record = AccessRecord(
                    time=datetime.now(UTC),
                    actor=actor,
                    request_id=None,
                    decision="denied",
                    status=403,
                    method="GET",
                    path="/catalog/v1/demo/namespaces",
                    operation="listNamespaces",
                    reason="no describe on the warehouse",
                )
                await record_access(conn, record)

    asyncio.run(given())
    return migrated_dsn


def _verify(*args: str) -> Result:
    return CliRunner().invoke(cli, ["audit", "verify", *args])


def _tamper(dsn: str, table: str, statement: str) -> None:
    """What an attacker with the database's owner rights would do: lift the append-only guard, change, restore."""
    with psycopg.connect(dsn, autocommit=True) as conn, conn.transaction():
        conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        conn.execute(statement)
        conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def _head(output: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith("catalog_events hash chain"))
    return line.rsplit(" ", 1)[-1]


def test_an_untouched_catalog_verifies_and_prints_both_heads(chained_catalog: str) -> None:
    result = _verify()
    assert result.exit_code == 0, result.output
    assert "catalog_events hash chain: intact" in result.output
    assert "access_audit_log hash chain: intact, 3 linked" in result.output
    position, digest = _head(result.output).split(":")
    assert int(position) >= 4
    assert len(bytes.fromhex(digest)) == 32
    assert _verify("--expect-head", _head(result.output)).exit_code == 0


def test_an_altered_event_breaks_the_chain_at_that_event(chained_catalog: str) -> None:
    _tamper(
        chained_catalog,
        "catalog_events",
        "UPDATE catalog_events SET data = jsonb_set(data, '{name}', '\"evil\"')"
        " WHERE type = 'io.catalog-es.table.renamed.v1'",
    )
    result = _verify()
    assert result.exit_code == 1
    assert "catalog_events hash chain: BROKEN" in result.output
    assert "differs from what was chained" in result.output


def test_a_removed_event_is_found(chained_catalog: str) -> None:
    _tamper(chained_catalog, "catalog_events", "DELETE FROM catalog_events WHERE global_position = 2")
    result = _verify()
    assert result.exit_code == 1
    assert "events 2..2 are gone from the log" in result.output


def test_an_altered_access_record_breaks_its_chain(chained_catalog: str) -> None:
    _tamper(
        chained_catalog, "access_audit_log", "UPDATE access_audit_log SET decision = 'allowed' WHERE actor = 'user:bob'"
    )
    result = _verify()
    assert result.exit_code == 1
    assert "access_audit_log hash chain: BROKEN" in result.output


def test_a_removed_access_record_breaks_its_chain(chained_catalog: str) -> None:
    _tamper(chained_catalog, "access_audit_log", "DELETE FROM access_audit_log WHERE actor = 'user:alice'")
    result = _verify()
    assert result.exit_code == 1
    assert "access record" in result.output


def _relink(dsn: str) -> None:
    """Drop the chain and let `log_chain` link the whole log again (as after a restore)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM catalog_event_chain")
        conn.execute("UPDATE projector_checkpoints SET position = 0 WHERE name = 'log_chain'")

    async def relink() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            while await ProjectorRunner(dsn, LOG_CHAIN).step(conn):
                pass

    asyncio.run(relink())


def test_a_recomputed_chain_is_caught_by_the_recorded_head(chained_catalog: str) -> None:
    """Alter an event and recompute every link: the chain is consistent again, but not with the recorded head."""
    anchor = _head(_verify().output)
    _tamper(chained_catalog, "catalog_events", "UPDATE catalog_events SET source = 'forged' WHERE global_position = 1")
    _relink(chained_catalog)
    assert "catalog_events hash chain: intact" in _verify().output  # consistent with itself…
    result = _verify("--expect-head", anchor)
    assert result.exit_code == 1  # …but not with what the operator recorded
    assert "no longer holds the recorded link" in result.output


def test_the_chain_is_never_rebuilt_from_the_log(chained_catalog: str) -> None:
    result = CliRunner().invoke(cli, ["projections", "rebuild", "log_chain"])
    assert result.exit_code == 2
    assert "never rebuilt" in result.output


def _access_head(output: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith("access_audit_log hash chain"))
    return line.rsplit(" ", 1)[-1]


def test_access_records_stripped_of_every_link_and_rewritten_break_the_chain(chained_catalog: str) -> None:
    _tamper(chained_catalog, "access_audit_log", "UPDATE access_audit_log SET digest = NULL, actor = 'user:nobody'")
    result = _verify()
    assert result.exit_code == 1, result.output
    assert "access_audit_log hash chain: BROKEN" in result.output
    assert "none of the 3 access records is linked" in result.output


def test_access_records_unlinked_after_a_linked_one_break_the_chain(chained_catalog: str) -> None:
    _tamper(
        chained_catalog, "access_audit_log", "UPDATE access_audit_log SET digest = NULL WHERE actor <> 'user:alice'"
    )
    result = _verify()
    assert result.exit_code == 1, result.output
    assert "lost its link" in result.output


def test_the_newest_access_records_deleted_are_caught_by_the_recorded_access_head(chained_catalog: str) -> None:
    anchor = _access_head(_verify().output)
    assert _verify("--expect-access-head", anchor).exit_code == 0
    _tamper(chained_catalog, "access_audit_log", "DELETE FROM access_audit_log WHERE actor = 'user:carol'")
    assert "access_audit_log hash chain: intact, 2 linked" in _verify().output  # consistent with itself…
    result = _verify("--expect-access-head", anchor)
    assert result.exit_code == 1  # …but not with what the operator recorded
    assert "no longer holds the recorded link" in result.output
    assert "access_audit_log hash chain: BROKEN" in result.output


def test_the_same_log_linked_anew_holds_the_recorded_head_as_after_a_restore(chained_catalog: str) -> None:
    """A restore brings the log, not its chain: `log_chain` links it again, to the very same links."""
    anchor = _head(_verify().output)
    _relink(chained_catalog)
    assert _verify("--expect-head", anchor).exit_code == 0
