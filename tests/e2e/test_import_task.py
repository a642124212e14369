"""Import as a management-API task (issue 32): `POST /warehouse/{id}/import` queues it on the server's task
runner, `GET …/import/{task}` follows it; the same import as the CLI (same metadata and rows, events naming the
source, a re-run changes nothing), the source's properties sealed and then gone, a refusal that lists the
uncovered locations, and the rule: create and modify on the warehouse, else 403."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from catalog_es.store.secrets import generate_secrets_key
from tests.databases import new_database
from tests.e2e.auth.test_service_principals import Secured, SecureServer, _printed_credential, _start
from tests.e2e.conftest import stop_catalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False))
SECRET = "sqlite-needs-no-password-but-this-is-secret"


def _rows(*ids: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, type=pa.int64()), "name": pa.array([f"n{i}" for i in ids])})


@pytest.fixture(scope="module")
def secured(pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    """One `serve --secure` (with its in-process task worker) for the module, on a database of its own."""
    secrets_key = generate_secrets_key()
    with new_database(pg_admin_dsn) as dsn:
        running = _start(tmp_path_factory.mktemp("import-task"), dsn, secrets_key)
        yield Secured(SecureServer(running, secrets_key, _printed_credential(running)), "demo")
        stop_catalog(running)


def _warehouse(secured: Secured) -> tuple[uuid.UUID, Path]:
    with psycopg.connect(secured.dsn) as conn:
        row = conn.execute("SELECT id, location FROM warehouses WHERE name = 'demo'").fetchone()
    assert row is not None
    return row[0], Path(str(row[1]).removeprefix("file://"))


def _database_file(secured: Secured) -> Path:
    """A SQLite file for a source catalog inside the server's file storage roots (a source elsewhere is refused)."""
    directory = secured.running.data_dir.parent / "sources"
    directory.mkdir(exist_ok=True)
    return directory / f"{uuid.uuid4().hex[:8]}.db"


def _source(db: Path, inside: Path, outside: Path | None = None) -> tuple[Catalog, dict[str, str]]:
    props = {"type": "sql", "uri": f"sqlite:///{db}", "warehouse": inside.as_uri()}
    source = load_catalog("src", **props)
    source.create_namespace("sales", {"owner": "finance"})
    orders = source.create_table("sales.orders", SCHEMA, location=(inside / "orders").as_uri())
    orders.append(_rows(1, 2))
    orders.append(_rows(3))
    source.create_table("sales.refunds", SCHEMA, location=(inside / "refunds").as_uri()).append(_rows(7))
    if outside is not None:
        source.create_namespace("legacy")
        source.create_table("legacy.old", SCHEMA, location=(outside / "old").as_uri()).append(_rows(9))
    return source, {**props, "sql.password": SECRET}  # an extra property pyiceberg passes on, never stored plain


def _finished(admin: httpx.Client, warehouse_id: uuid.UUID, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        response = admin.get(f"/warehouse/{warehouse_id}/import/{task_id}")
        assert response.status_code == 200, response.text
        status: dict[str, Any] = response.json()
        if status["status"] in ("SUCCESS", "FAILED", "CANCELLED"):
            return status
        time.sleep(0.2)
    pytest.fail(f"import {task_id} did not finish: {status}")


def _queue(admin: httpx.Client, warehouse_id: uuid.UUID, props: dict[str, str], **more: Any) -> str:
    body = {"source": props, "catalog-name": "src", **more}
    response = admin.post(f"/warehouse/{warehouse_id}/import", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["task-id"])


def _imported(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT extensions->>'importedfrom' FROM catalog_events WHERE extensions ? 'importedfrom'"
            " ORDER BY global_position"
        ).fetchall()
    return [str(row[0]) for row in rows]


def _everything(dsn: str) -> str:
    """Every event and every row of the task tables, as text (a secret must appear in none of them)."""
    with psycopg.connect(dsn) as conn:
        parts = [
            json.dumps([str(row[0]) for row in conn.execute(f"SELECT t::text FROM {table} t").fetchall()])
            for table in ("catalog_events", "tasks", "task_attempts", "task_leases")
        ]
    return "\n".join(parts)


def _sealed(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM storage_secrets").fetchone()
    return int(row[0]) if row else 0


def test_import_task_brings_the_catalog_and_a_rerun_changes_nothing(secured: Secured, tmp_path: Path) -> None:
    warehouse_id, location = _warehouse(secured)
    db = _database_file(secured)
    source, props = _source(db, location / "from-task")
    sealed_before = _sealed(secured.dsn)
    with secured.management() as admin:
        first = _finished(admin, warehouse_id, _queue(admin, warehouse_id, props))
        assert first["status"] == "SUCCESS", first
        assert first["phase"] == "done"
        assert first["counts"] == {"create-namespace": 1, "register-table": 2}
        assert first["source"] == f"sql:sqlite:///{db}"
        label = first["source"]
        assert set(_imported(secured.dsn)) == {f"{label}#sales", f"{label}#sales.orders", f"{label}#sales.refunds"}

        target = secured.pyiceberg(secured.admin_credential)
        assert target.load_namespace_properties("sales")["owner"] == "finance"
        for name in ("sales.orders", "sales.refunds"):
            mine, theirs = target.load_table(name), source.load_table(name)
            assert mine.metadata_location == theirs.metadata_location
            assert mine.metadata.model_dump() == theirs.metadata.model_dump()
            assert mine.scan().to_arrow().sort_by("id").equals(theirs.scan().to_arrow().sort_by("id"))

        events = len(_imported(secured.dsn))
        again = _finished(admin, warehouse_id, _queue(admin, warehouse_id, props))
        assert again["status"] == "SUCCESS", again
        assert again["counts"] == {}
        assert again["unchanged"] == 3
        assert len(_imported(secured.dsn)) == events

        listed = admin.post(f"/warehouse/{warehouse_id}/task/list", json={"queue-name": ["catalog_import"]})
        assert listed.status_code == 200, listed.text
        assert {task["progress"] for task in listed.json()["tasks"]} == {1.0}
    assert SECRET not in _everything(secured.dsn)
    assert _sealed(secured.dsn) == sealed_before  # the sealed properties are deleted once the task ended


def test_import_task_refuses_a_source_the_warehouse_does_not_cover(secured: Secured, tmp_path: Path) -> None:
    warehouse_id, location = _warehouse(secured)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    source, props = _source(_database_file(secured), location / "refused", outside)
    before = len(_imported(secured.dsn))
    with secured.management() as admin:
        status = _finished(admin, warehouse_id, _queue(admin, warehouse_id, props))
    assert status["status"] == "FAILED", status
    assert status["phase"] == "refused"
    assert status["attempt"] == 1  # refused for good: no retry
    old = source.load_table("legacy.old")
    assert sorted(status["uncovered"]) == sorted([old.metadata.location, old.metadata_location])
    assert status["uncovered-count"] == 2
    assert "does not cover 2 location(s)" in status["errors"][0]
    assert len(_imported(secured.dsn)) == before  # nothing was written
    assert SECRET not in _everything(secured.dsn)


def test_import_route_refuses_code_loading_properties_and_unknown_types(secured: Secured) -> None:
    warehouse_id, _ = _warehouse(secured)
    with secured.management() as admin:
        for source in (
            {"type": "sql", "uri": "sqlite://", "py-io-impl": "os.system"},
            {"py-catalog-impl": "builtins.object"},
            {"type": "nonsense"},
            {"warehouse": "file:///x"},
        ):
            response = admin.post(f"/warehouse/{warehouse_id}/import", json={"source": source})
            assert response.status_code == 400, response.text
            assert response.json()["error"]["type"] == "BadRequestException"
        missing = admin.get(f"/warehouse/{warehouse_id}/import/{uuid.uuid4()}")
        assert missing.status_code == 404, missing.text


def test_import_route_refuses_hosts_and_files_the_server_may_not_open(secured: Secured, tmp_path: Path) -> None:
    """Through the API a source's hosts pass the storage allow-list and its SQLite file the file roots."""
    warehouse_id, _ = _warehouse(secured)
    with secured.management() as admin:
        for source in (
            {"type": "rest", "uri": "http://user:hunter2-password@169.254.169.254/latest"},  # cloud metadata
            {"type": "rest", "uri": "http://10.20.30.40:8181/catalog"},  # not on the allow-list
            {"type": "hive", "uri": "thrift://10.20.30.40:9083"},
            {"type": "glue", "glue.endpoint": "http://192.168.0.9:5000"},
            {"type": "sql", "uri": f"sqlite:///{tmp_path / 'outside-the-roots.db'}"},
            {"type": "sql", "uri": f"sqlite:///{secured.running.data_dir / 'pg' / 'x.db'}"},  # the server's own data
            {"type": "sql", "uri": "postgresql://catalog:hunter2-password@/catalog"},  # a socket: no host to check
        ):
            response = admin.post(f"/warehouse/{warehouse_id}/import", json={"source": source})
            assert response.status_code == 400, (source, response.text)
            assert "hunter2-password" not in response.text
        # Loopback is on the test servers' allow-list: queued, and its first attempt fails on the wrong secret.
        wrong = "0b7e5b52-6f5a-4c51-9a0e-6e4c1f3d2a10:not-the-secret-at-all"
        allowed = {"type": "rest", "uri": secured.running.catalog_uri, "credential": wrong, "warehouse": "demo"}
        response = admin.post(f"/warehouse/{warehouse_id}/import", json={"source": allowed})
        assert response.status_code == 202, response.text
        path = f"/warehouse/{warehouse_id}/import/{response.json()['task-id']}"
        deadline = time.monotonic() + 60
        while not (status := admin.get(path).json())["errors"] and time.monotonic() < deadline:
            time.sleep(0.2)
    assert status["errors"], status
    assert "not-the-secret-at-all" not in " ".join(status["errors"])


def test_import_needs_create_and_modify_on_the_warehouse(secured: Secured, tmp_path: Path) -> None:
    warehouse_id, location = _warehouse(secured)
    _, props = _source(_database_file(secured), location / "not-allowed")
    with secured.management() as admin:
        made = admin.post("/service-principal", json={"name": f"importer-{uuid.uuid4().hex[:6]}"})
        assert made.status_code == 201, made.text
        principal = made.json()
        task_id = _queue(admin, warehouse_id, props)
    with secured.management(principal["credential"]) as stranger:
        refused = stranger.post(f"/warehouse/{warehouse_id}/import", json={"source": props})
        assert refused.status_code in (403, 404), refused.text
        assert stranger.get(f"/warehouse/{warehouse_id}/import/{task_id}").status_code in (403, 404)
        with secured.management() as admin:
            grant = {"writes": [{"type": "create", "user": principal["user-id"]}], "deletes": []}
            response = admin.post(f"/permissions/warehouse/{warehouse_id}/assignments", json=grant)
            assert response.status_code == 204, response.text
        half = stranger.post(f"/warehouse/{warehouse_id}/import", json={"source": props})
        assert half.status_code == 403, half.text  # create alone is not enough: an import may move a table on
