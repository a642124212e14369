"""Format-version 3 tables over raw REST: row lineage, the upgrade to v3, v3 types, encryption keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import (
    SCHEMA,
    Json,
    append_snapshot_updates,
    assert_error,
    create_namespace,
    create_table,
    load_table,
    ns,
    table_url,
)
from tests.e2e.shared_server import module_catalog, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


def _stored(metadata_location: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(Path(unquote(urlsplit(metadata_location).path)).read_text())
    return document


def _add(key_id: str) -> dict[str, object]:
    return {"action": "add-encryption-key", "encryption-key": {"key-id": key_id, "encrypted-key-metadata": "AAEC"}}


def test_encryption_keys_are_added_and_removed_when_table_is_format_version_3(rest: RestApi) -> None:
    create_namespace(rest, "vault")
    created = create_table(rest, "vault", "secrets", {"properties": {"format-version": "3"}})
    assert created.status_code == 200, created.text
    assert created.json()["metadata"]["format-version"] == 3
    url = table_url(rest, "vault", "secrets")

    first = rest.http.post(url, json={"updates": [_add("k1")]})
    second = rest.http.post(url, json={"updates": [_add("k2"), {"action": "remove-encryption-key", "key-id": "k1"}]})

    assert first.status_code == 200, first.text
    assert second.status_code == 200, second.text
    loaded = load_table(rest, "vault", "secrets")
    assert [key["key-id"] for key in loaded["metadata"]["encryption-keys"]] == ["k2"]
    assert _stored(loaded["metadata-location"])["encryption-keys"] == loaded["metadata"]["encryption-keys"]


def test_encryption_key_commit_is_refused_when_table_is_format_version_2(rest: RestApi) -> None:
    create_namespace(rest, "plain")
    assert create_table(rest, "plain", "t", {"properties": {"format-version": "2"}}).status_code == 200
    before = load_table(rest, "plain", "t")

    refused = rest.http.post(table_url(rest, "plain", "t"), json={"updates": [_add("k1")]})

    assert_error(refused, 400, "BadRequestException")
    assert load_table(rest, "plain", "t")["metadata-location"] == before["metadata-location"]


def _snapshot(metadata: dict[str, Any], snapshot_id: int, first_row_id: int | None, added_rows: int | None) -> Json:
    [add, set_ref] = append_snapshot_updates(metadata, snapshot_id)
    lineage = {"first-row-id": first_row_id, "added-rows": added_rows}
    add["snapshot"].update({key: value for key, value in lineage.items() if value is not None})
    return {"updates": [add, set_ref]}


def test_v3_table_gets_next_row_id_zero_when_created_directly_or_staged(rest: RestApi) -> None:
    create_namespace(rest, "lineage")
    direct = create_table(rest, "lineage", "direct", {"properties": {"format-version": "3"}})
    staged = create_table(rest, "lineage", "staged", {"properties": {"format-version": "3"}, "stage-create": True})
    assert direct.status_code == 200, direct.text
    assert staged.status_code == 200, staged.text
    committed = rest.http.post(
        table_url(rest, "lineage", "staged"),
        json={
            "requirements": [{"type": "assert-create"}],
            "updates": [
                {"action": "upgrade-format-version", "format-version": 3},
                {"action": "add-schema", "schema": SCHEMA},
                {"action": "set-current-schema", "schema-id": -1},
                {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                {"action": "set-default-spec", "spec-id": -1},
                {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                {"action": "set-default-sort-order", "sort-order-id": -1},
                {"action": "set-location", "location": staged.json()["metadata"]["location"]},
            ],
        },
    )

    assert committed.status_code == 200, committed.text
    for name in ("direct", "staged"):
        loaded = load_table(rest, "lineage", name)
        assert loaded["metadata"]["next-row-id"] == 0, name
        assert _stored(loaded["metadata-location"])["next-row-id"] == 0, name
    assert staged.json()["metadata"]["next-row-id"] == 0


def test_v3_next_row_id_advances_by_added_rows_when_snapshots_are_committed(rest: RestApi) -> None:
    create_namespace(rest, "rows")
    assert create_table(rest, "rows", "t", {"properties": {"format-version": "3"}}).status_code == 200
    url = table_url(rest, "rows", "t")

    first = rest.http.post(url, json=_snapshot(load_table(rest, "rows", "t")["metadata"], 1, 0, 10))
    second = rest.http.post(url, json=_snapshot(first.json()["metadata"], 2, 10, 5))

    assert first.status_code == 200, first.text
    assert second.status_code == 200, second.text
    loaded = load_table(rest, "rows", "t")
    assert loaded["metadata"]["next-row-id"] == 15
    assert _stored(loaded["metadata-location"])["next-row-id"] == 15


@pytest.mark.parametrize(
    ("first_row_id", "added_rows"), [(0, None), (-1, 3)], ids=["no-added-rows", "behind-next-row-id"]
)
def test_v3_snapshot_is_refused_when_row_lineage_is_missing_or_behind(
    rest: RestApi, first_row_id: int | None, added_rows: int | None
) -> None:
    create_namespace(rest, "strict")
    assert create_table(rest, "strict", "t", {"properties": {"format-version": "3"}}).status_code == 200
    before = load_table(rest, "strict", "t")

    refused = rest.http.post(
        table_url(rest, "strict", "t"), json=_snapshot(before["metadata"], 7, first_row_id, added_rows)
    )

    assert_error(refused, 400, "BadRequestException")
    assert load_table(rest, "strict", "t")["metadata-location"] == before["metadata-location"]


def test_v2_table_is_upgraded_to_v3_with_next_row_id_zero(rest: RestApi) -> None:
    create_namespace(rest, "upgrade")
    assert create_table(rest, "upgrade", "t", {"properties": {"format-version": "2"}}).status_code == 200
    url = table_url(rest, "upgrade", "t")

    upgraded = rest.http.post(url, json={"updates": [{"action": "upgrade-format-version", "format-version": 3}]})
    too_far = rest.http.post(url, json={"updates": [{"action": "upgrade-format-version", "format-version": 4}]})

    assert upgraded.status_code == 200, upgraded.text
    loaded = load_table(rest, "upgrade", "t")
    assert (loaded["metadata"]["format-version"], loaded["metadata"]["next-row-id"]) == (3, 0)
    stored = _stored(loaded["metadata-location"])
    assert (stored["format-version"], stored["next-row-id"]) == (3, 0)
    assert_error(too_far, 400, "BadRequestException")


V3_TYPES = ["variant", "unknown", "timestamp_ns", "timestamptz_ns", "geometry", "geography"]


def _schema_of(types: list[str]) -> Json:
    fields = [{"id": i, "name": f"c{i}", "type": kind, "required": False} for i, kind in enumerate(types, start=1)]
    return {"type": "struct", "schema-id": 0, "fields": fields}


def test_v3_types_are_kept_when_a_v3_table_is_created_and_evolved(rest: RestApi) -> None:
    create_namespace(rest, "types")
    created = rest.http.post(
        rest.url(f"namespaces/{ns('types')}/tables"),
        json={"name": "t", "schema": _schema_of(V3_TYPES), "properties": {"format-version": "3"}},
    )
    assert created.status_code == 200, created.text
    evolved_schema = {**_schema_of([*V3_TYPES, "variant"]), "schema-id": 1}

    evolved = rest.http.post(
        table_url(rest, "types", "t"),
        json={
            "updates": [
                {"action": "add-schema", "schema": evolved_schema},
                {"action": "set-current-schema", "schema-id": -1},
            ]
        },
    )

    assert evolved.status_code == 200, evolved.text
    loaded = load_table(rest, "types", "t")
    [current] = [s for s in loaded["metadata"]["schemas"] if s["schema-id"] == loaded["metadata"]["current-schema-id"]]
    assert [field["type"] for field in current["fields"]] == [*V3_TYPES, "variant"]
    assert _stored(loaded["metadata-location"])["schemas"] == loaded["metadata"]["schemas"]


def test_v3_types_are_refused_when_a_schema_is_added_to_a_format_version_2_table(rest: RestApi) -> None:
    create_namespace(rest, "old")
    assert create_table(rest, "old", "t", {"properties": {"format-version": "2"}}).status_code == 200
    before = load_table(rest, "old", "t")

    refused = [
        rest.http.post(
            table_url(rest, "old", "t"),
            json={"updates": [{"action": "add-schema", "schema": {**_schema_of([kind]), "schema-id": 1}}]},
        )
        for kind in ("timestamp_ns", "unknown")
    ]

    for response in refused:
        assert_error(response, 400, "BadRequestException")
    assert load_table(rest, "old", "t")["metadata-location"] == before["metadata-location"]


def test_v3_column_defaults_are_kept_when_a_table_is_created(rest: RestApi) -> None:
    """`initial-default` / `write-default` survive the fresh ids (Iceberg Java's `AssignFreshIds` keeps them)."""
    create_namespace(rest, "defaults")
    schema = {
        "type": "struct",
        "schema-id": 0,
        "fields": [
            {"id": 1, "name": "id", "type": "long", "required": True},
            {"id": 2, "name": "level", "type": "int", "required": False, "initial-default": 3, "write-default": 4},
            {"id": 3, "name": "note", "type": "string", "required": False, "write-default": "n/a"},
        ],
    }
    created = create_table(rest, "defaults", "t", {"schema": schema, "properties": {"format-version": "3"}})
    assert created.status_code == 200, created.text

    loaded = load_table(rest, "defaults", "t")
    for document in (created.json()["metadata"], loaded["metadata"], _stored(loaded["metadata-location"])):
        fields: Any = document["schemas"][0]["fields"]  # type: ignore[index]
        assert (fields[1]["initial-default"], fields[1]["write-default"]) == (3, 4)
        assert fields[2]["write-default"] == "n/a"
