"""Audit end to end: the management endpoints and `catalog-es audit` against a running catalog."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import UTC, datetime

import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.table import StaticTable

from tests.e2e.conftest import RestApi, RunningCatalog, run_cli
from tests.e2e.rest_helpers import (
    append_snapshot_updates,
    assert_error,
    create_namespace,
    create_table,
    load_table,
    table_url,
)

pytestmark = pytest.mark.e2e


def _now() -> str:
    time.sleep(0.01)
    at = datetime.now(UTC).isoformat()
    time.sleep(0.01)
    return at


def _audit(catalog: RunningCatalog, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["audit", *args], catalog.env, timeout=120)


def test_audit_endpoints_and_cli_agree_with_the_catalog_when_a_table_evolves(catalog: RunningCatalog, rest: RestApi):
    management = rest.http.base_url.copy_with(path="/management/v1/")
    create_namespace(rest, "audit_ns")
    assert create_table(rest, "audit_ns", "t1").status_code == 200
    before_commit = _now()
    metadata = load_table(rest, "audit_ns", "t1")["metadata"]
    commit = rest.http.post(
        table_url(rest, "audit_ns", "t1"), json={"requirements": [], "updates": append_snapshot_updates(metadata, 77)}
    )
    assert commit.status_code == 200, commit.text
    after_commit = _now()

    events = rest.http.get(f"{management}events", params={"namespace": "audit_ns", "pageSize": 2}).json()
    assert [e["type"] for e in events["events"]] == [
        "io.catalog-es.namespace.created.v1",
        "io.catalog-es.table.created.v1",
    ]
    assert events["events"][0]["specversion"] == "1.0"
    rest_of = rest.http.get(
        f"{management}events", params={"namespace": "audit_ns", "pageToken": events["next-page-token"]}
    ).json()
    assert [e["type"] for e in rest_of["events"]] == ["io.catalog-es.table.committed.v2"]
    assert "next-page-token" not in rest_of or rest_of["next-page-token"] is None
    table_id = metadata["table-uuid"]
    history = rest.http.get(f"{management}events/history/table-{table_id}").json()
    assert [change["summary"].get("snapshots-added") for change in history["changes"]] == [None, [77]]

    then = rest.http.get(f"{management}as-of", params={"time": before_commit}).json()
    now = rest.http.get(f"{management}as-of", params={"time": after_commit}).json()
    assert [(t["name"], t["current-snapshot-id"]) for t in then["tables"]] == [("t1", None)]
    assert [(t["name"], t["current-snapshot-id"]) for t in now["tables"]] == [("t1", 77)]
    assert now["tables"][0]["metadata-location"] == load_table(rest, "audit_ns", "t1")["metadata-location"]

    assert_error(rest.http.get(f"{management}as-of", params={"time": "noon"}), 400, "BadRequestException")
    assert_error(rest.http.get(f"{management}events", params={"type": "table.exploded"}), 400, "BadRequestException")
    assert_error(rest.http.get(f"{management}events/history/table-x"), 400, "BadRequestException")

    lines = _audit(catalog, "history", "--table", "audit_ns.t1", "--json")
    assert lines.returncode == 0, lines.stderr
    cli_events = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [e["type"].split(".")[3] for e in cli_events] == ["created", "committed"]
    shown = _audit(catalog, "history", "--type", "table.committed")
    assert shown.returncode == 0, shown.stderr
    assert "+snapshot 77" in shown.stdout
    as_of = _audit(catalog, "as-of", before_commit, "--json")
    assert as_of.returncode == 0, as_of.stderr
    assert json.loads(as_of.stdout) == then
    assert _audit(catalog, "as-of", "noon").returncode == 2


def test_audit_export_appends_only_new_events_when_run_again(catalog: RunningCatalog, rest: RestApi):
    create_namespace(rest, "sales")
    first = _audit(catalog, "export", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["table"] == "demo.audit.catalog_events"
    create_namespace(rest, "marketing")
    second = _audit(catalog, "export", "--json")
    assert second.returncode == 0, second.stderr

    iceberg = load_catalog("audit", type="rest", uri=catalog.catalog_uri, warehouse="demo")
    rows = iceberg.load_table("audit.catalog_events").scan().to_arrow().sort_by("position").to_pylist()
    positions = [row["position"] for row in rows]
    assert positions == list(range(1, len(rows) + 1)), "each event exactly once, none skipped"
    assert json.loads(second.stdout)["from-position"] == json.loads(first.stdout)["to-position"] + 1
    namespaces = [json.loads(row["data"])["namespace"] for row in rows if row["type"].endswith("namespace.created.v1")]
    assert namespaces == [["sales"], ["audit"], ["marketing"]]
    assert {row["actor"] for row in rows} >= {"anonymous", "audit-export"}


def test_audit_export_and_as_of_work_on_a_data_dir_when_no_server_runs(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}
    data_dir = str(tmp_path / "data")

    def run(*args: str) -> str:
        result = run_cli(["audit", *args, "--data-dir", data_dir], env, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    # Only `serve` and `migrate` create a catalog (issue #20: a mistyped --data-dir must not start an empty one).
    created = run_cli(["migrate", "--data-dir", data_dir], env, timeout=120)
    assert created.returncode == 0, created.stderr
    exported = json.loads(run("export", "--json"))
    state = json.loads(run("as-of", datetime.now(UTC).isoformat(), "--json"))
    [table] = [t for t in state["tables"] if t["name"] == "catalog_events"]
    assert table["namespace"] == ["audit"]
    assert table["current-snapshot-id"] is not None
    rows = StaticTable.from_metadata(table["metadata-location"]).scan().to_arrow()
    assert rows.num_rows == exported["exported"] == exported["to-position"]
