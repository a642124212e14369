"""Multi-table transactions, loadTable ETags, the metrics sink and the request-size guard over raw REST."""

from __future__ import annotations

import json
import os
from pathlib import Path

import psycopg
import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import (
    append_snapshot_updates,
    assert_error,
    create_namespace,
    create_table,
    load_table,
    main_snapshot_id,
    table_url,
)

pytestmark = pytest.mark.e2e


def _change(table: str, requirements: list[dict[str, object]], updates: list[dict[str, object]]) -> dict[str, object]:
    return {"identifier": {"namespace": ["tx"], "name": table}, "requirements": requirements, "updates": updates}


def _event_commit_ids(dsn: str, event_type: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT commit_id::text FROM catalog_events WHERE type = %s ORDER BY global_position", (event_type,)
        ).fetchall()
    return [row[0] for row in rows]


def test_transaction_commits_every_table_with_one_commit_id_when_all_requirements_hold(
    rest: RestApi, catalog: RunningCatalog
) -> None:
    create_namespace(rest, "tx")
    for name in ("a", "b"):
        assert create_table(rest, "tx", name).status_code == 200
    bases = {name: load_table(rest, "tx", name)["metadata"] for name in ("a", "b")}

    response = rest.http.post(
        rest.url("transactions/commit"),
        json={
            "table-changes": [
                _change(
                    name,
                    [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}],
                    [
                        *append_snapshot_updates(bases[name], 100 + i),
                        {"action": "set-properties", "updates": {"t": name}},
                    ],
                )
                for i, name in enumerate(("a", "b"))
            ]
        },
    )

    assert response.status_code == 204, response.text
    assert main_snapshot_id(load_table(rest, "tx", "a")["metadata"]) == 100
    assert main_snapshot_id(load_table(rest, "tx", "b")["metadata"]) == 101
    commit_ids = _event_commit_ids(catalog.env["CATALOG_ES__PG_DSN"], "io.catalog-es.table.committed.v2")
    assert len(commit_ids) == 2
    assert len(set(commit_ids)) == 1, "both table events belong to one commit"


def test_transaction_changes_nothing_when_one_requirement_fails(rest: RestApi) -> None:
    create_namespace(rest, "tx")
    for name in ("a", "b"):
        assert create_table(rest, "tx", name).status_code == 200
    before = {name: load_table(rest, "tx", name) for name in ("a", "b")}
    metadata_dir = Path(before["a"]["metadata-location"].removeprefix("file://")).parent
    files_before = sorted(os.listdir(metadata_dir))

    response = rest.http.post(
        rest.url("transactions/commit"),
        json={
            "table-changes": [
                _change("a", [], [{"action": "set-properties", "updates": {"x": "1"}}]),
                _change("b", [{"type": "assert-current-schema-id", "current-schema-id": 42}], []),
            ]
        },
    )

    assert_error(response, 409, "CommitFailedException")
    for name in ("a", "b"):
        assert load_table(rest, "tx", name)["metadata-location"] == before[name]["metadata-location"]
    assert sorted(os.listdir(metadata_dir)) == files_before, "no metadata file is left behind"


def test_transaction_is_refused_when_a_table_is_missing_or_named_twice(rest: RestApi) -> None:
    create_namespace(rest, "tx")
    assert create_table(rest, "tx", "a").status_code == 200
    set_x = [{"action": "set-properties", "updates": {"x": "1"}}]

    missing = rest.http.post(
        rest.url("transactions/commit"), json={"table-changes": [_change("a", [], set_x), _change("nope", [], set_x)]}
    )
    twice = rest.http.post(
        rest.url("transactions/commit"), json={"table-changes": [_change("a", [], set_x), _change("A", [], set_x)]}
    )

    assert_error(missing, 404, "NoSuchTableException")
    assert_error(twice, 400, "BadRequestException")
    assert "x" not in load_table(rest, "tx", "a")["metadata"].get("properties", {})


def test_load_answers_304_when_if_none_match_has_the_current_etag(rest: RestApi) -> None:
    create_namespace(rest, "tags")
    created = create_table(rest, "tags", "t")
    url = table_url(rest, "tags", "t")
    first = rest.http.get(url)
    tag = first.headers["ETag"]

    unchanged = rest.http.get(url, headers={"If-None-Match": tag})
    refs_only = rest.http.get(url, params={"snapshots": "refs"}, headers={"If-None-Match": tag})
    committed = rest.http.post(url, json={"updates": [{"action": "set-properties", "updates": {"k": "v"}}]})
    after_commit = rest.http.get(url, headers={"If-None-Match": tag})

    assert created.headers["ETag"] == tag
    assert unchanged.status_code == 304
    assert unchanged.content == b""
    assert refs_only.status_code == 200, "the refs-only representation has its own ETag"
    assert committed.headers["ETag"] != tag
    assert after_commit.status_code == 200
    assert after_commit.headers["ETag"] == committed.headers["ETag"]


def test_metrics_reports_are_stored_and_bounded_when_engines_send_them(rest: RestApi, catalog: RunningCatalog) -> None:
    create_namespace(rest, "m")
    assert create_table(rest, "m", "t").status_code == 200
    url = f"{table_url(rest, 'm', 't')}/metrics"
    shapes = [
        {"report-type": "scan-report", "table-name": "m.t", "snapshot-id": 1, "filter": True, "metrics": {}},
        {"report-type": "commit-report", "table-name": "m.t", "snapshot-id": 1, "sequence-number": 1},
    ]
    bodies = [json.dumps(shape).encode() for shape in shapes]
    bodies.append(rb'{"something": ["unexpected", 1, null], "text": "nul \u0000 and a surrogate pair \ud83d\ude00"}')

    headers = {"Content-Type": "application/json"}
    statuses = [rest.http.post(url, content=body, headers=headers).status_code for body in bodies * 40]
    missing = rest.http.post(f"{table_url(rest, 'm', 'nope')}/metrics", json=shapes[0])

    assert set(statuses) == {204}
    assert missing.status_code == 204, "accepted and dropped, as Lakekeeper does (Spark reports on staged tables)"
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        stored = conn.execute("SELECT count(*) FROM table_metrics_reports").fetchone()
        types = {row[0] for row in conn.execute("SELECT DISTINCT report_type FROM table_metrics_reports")}
        events = conn.execute("SELECT count(*) FROM catalog_events WHERE type LIKE '%metric%'").fetchone()
    assert stored == (100,), "at most 100 reports per table are kept"
    assert types == {"scan-report", "commit-report", "other"}
    assert events == (0,), "metrics never enter the event log"


def test_oversized_request_is_refused_with_413_in_the_error_envelope(rest: RestApi) -> None:
    big = {"namespace": ["big"], "properties": {"blob": "x" * 11_000_000}}

    response = rest.http.post(rest.url("namespaces"), json=big)

    assert_error(response, 413, "RequestTooLargeException")
    assert rest.http.get(rest.url("namespaces/big")).status_code == 404
