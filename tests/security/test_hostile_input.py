"""Hostile request bodies (issue #13, medium/low): every one gets a 4xx in the Iceberg envelope and writes nothing.

Each test sends one probe of the penetration test to a real server and checks the status, the error
type, and that no event was appended (and, for commits, that the table's metadata did not move).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import SCHEMA, create_namespace, create_table
from tests.e2e.shared_server import module_catalog, module_server, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e

JSON = {"content-type": "application/json"}
DEEP = b"[" * 100_000 + b"]" * 100_000
FIVE_MB = "x" * 5_000_000


def _events(pg_dsn: str) -> int:
    with psycopg.connect(pg_dsn) as conn:
        row = conn.execute("SELECT count(*) FROM catalog_events").fetchone()
    assert row is not None
    return int(row[0])


def _assert_refused(response: httpx.Response, status: int = 400, type_name: str = "BadRequestException") -> None:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == type_name
    assert error["code"] == status
    assert error["message"]


@pytest.fixture
def pg_dsn(module_catalog: RunningCatalog) -> str:  # noqa: F811
    """The database of the module's server."""
    return module_catalog.env["CATALOG_ES__PG_DSN"]


@pytest.fixture
def table(rest: RestApi) -> str:
    """`ns1.t1`; returns the table's URL below the prefix."""
    create_namespace(rest, "ns1")
    assert create_table(rest, "ns1", "t1").status_code == 200
    return rest.url("namespaces/ns1/tables/t1")


@pytest.fixture
def unchanged(rest: RestApi, table: str, pg_dsn: str) -> Iterator[None]:
    """After the test: no event appended and `ns1.t1` still at its metadata location."""
    before = _events(pg_dsn), rest.http.get(table).json()["metadata-location"]
    yield
    assert (_events(pg_dsn), rest.http.get(table).json()["metadata-location"]) == before


def _commit(rest: RestApi, table: str, *updates: dict[str, Any]) -> httpx.Response:
    return rest.http.post(table, json={"updates": list(updates)})


def _snapshot(snapshot_id: int, sequence_number: int) -> dict[str, Any]:
    return {
        "action": "add-snapshot",
        "snapshot": {
            "snapshot-id": snapshot_id,
            "sequence-number": sequence_number,
            "timestamp-ms": 1_700_000_000_000,
            "manifest-list": "file:///nowhere/snap.avro",
            "summary": {"operation": "append"},
        },
    }


def test_deeply_nested_json_gets_400_when_sent_to_the_catalog_api(rest: RestApi, pg_dsn: str) -> None:
    before = _events(pg_dsn)
    _assert_refused(rest.http.post(rest.url("namespaces"), content=DEEP, headers=JSON))
    assert _events(pg_dsn) == before


def test_deeply_nested_json_gets_400_when_sent_to_the_management_api(catalog: RunningCatalog, pg_dsn: str) -> None:
    before = _events(pg_dsn)
    body = b'{"warehouse-name": "w", "storage-profile": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001
    _assert_refused(httpx.post(f"{catalog.base_url}/management/v1/warehouse", content=body, headers=JSON, timeout=30))
    assert _events(pg_dsn) == before


def test_invalid_utf8_gets_400_when_sent_to_the_catalog_api(rest: RestApi, pg_dsn: str) -> None:
    before = _events(pg_dsn)
    _assert_refused(rest.http.post(rest.url("namespaces"), content=b'{"namespace": ["\xff\xfe"]}', headers=JSON))
    assert _events(pg_dsn) == before


def test_invalid_utf8_gets_400_when_sent_to_the_management_api(catalog: RunningCatalog, pg_dsn: str) -> None:
    before = _events(pg_dsn)
    body = b'{"project-name": "\xc3\x28"}'
    _assert_refused(httpx.post(f"{catalog.base_url}/management/v1/project", content=body, headers=JSON, timeout=30))
    assert _events(pg_dsn) == before


def test_decimal_precision_above_38_gets_400_when_a_table_is_created(rest: RestApi, pg_dsn: str) -> None:
    create_namespace(rest, "ns1")
    before = _events(pg_dsn)
    schema = {"type": "struct", "fields": [{"id": 1, "name": "d", "type": "decimal(1000,2)", "required": False}]}
    _assert_refused(rest.http.post(rest.url("namespaces/ns1/tables"), json={"name": "t", "schema": schema}))
    assert _events(pg_dsn) == before
    assert rest.http.head(rest.url("namespaces/ns1/tables/t")).status_code == 404


def test_huge_format_version_gets_400_when_a_table_is_created(rest: RestApi, pg_dsn: str) -> None:
    create_namespace(rest, "ns1")
    before = _events(pg_dsn)
    body = {"name": "t", "schema": SCHEMA, "properties": {"format-version": str(2**70)}}
    _assert_refused(rest.http.post(rest.url("namespaces/ns1/tables"), json=body))
    assert _events(pg_dsn) == before
    assert rest.http.head(rest.url("namespaces/ns1/tables/t")).status_code == 404


def test_five_megabyte_namespace_name_gets_400(rest: RestApi, pg_dsn: str) -> None:
    before = _events(pg_dsn)
    _assert_refused(rest.http.post(rest.url("namespaces"), json={"namespace": [FIVE_MB]}))
    assert _events(pg_dsn) == before


def test_five_megabyte_table_name_gets_400(rest: RestApi, pg_dsn: str) -> None:
    create_namespace(rest, "ns1")
    before = _events(pg_dsn)
    _assert_refused(create_table(rest, "ns1", FIVE_MB))
    assert _events(pg_dsn) == before


def test_five_megabyte_rename_destination_gets_400(rest: RestApi, table: str, unchanged: None) -> None:
    body = {"source": {"namespace": ["ns1"], "name": "t1"}, "destination": {"namespace": ["ns1"], "name": FIVE_MB}}
    _assert_refused(rest.http.post(rest.url("tables/rename"), json=body))


def test_five_megabyte_role_name_gets_400_when_sent_to_the_management_api(catalog: RunningCatalog, pg_dsn: str) -> None:
    before = _events(pg_dsn)
    response = httpx.post(f"{catalog.base_url}/management/v1/role", json={"name": FIVE_MB}, timeout=30)
    _assert_refused(response)
    assert _events(pg_dsn) == before


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("user", {"id": "u-1", "name": FIVE_MB}),
        ("user", {"id": FIVE_MB, "name": "u"}),
        ("project", {"project-name": FIVE_MB}),
        ("warehouse", {"warehouse-name": FIVE_MB, "storage-profile": {"type": "file", "location": "/nowhere"}}),
        ("role", {"name": "r", "description": FIVE_MB}),
    ],
)
def test_five_megabyte_management_names_get_400(catalog: RunningCatalog, pg_dsn: str, path: str, body: dict) -> None:
    before = _events(pg_dsn)
    _assert_refused(httpx.post(f"{catalog.base_url}/management/v1/{path}", json=body, timeout=30))
    assert _events(pg_dsn) == before


def test_snapshot_id_of_2_pow_64_gets_400_when_committed(rest: RestApi, table: str, unchanged: None) -> None:
    _assert_refused(_commit(rest, table, _snapshot(2**64, 1)))


def test_snapshot_id_of_2_pow_63_gets_400_when_committed(rest: RestApi, table: str, unchanged: None) -> None:
    _assert_refused(_commit(rest, table, _snapshot(2**63, 1)))


def test_sequence_number_of_2_pow_70_gets_400_when_committed(rest: RestApi, table: str, unchanged: None) -> None:
    _assert_refused(_commit(rest, table, _snapshot(1, 2**70)))


def test_schema_id_outside_int_gets_400_when_committed(rest: RestApi, table: str, unchanged: None) -> None:
    schema = {**SCHEMA, "schema-id": 2**40}
    _assert_refused(_commit(rest, table, {"action": "add-schema", "schema": schema}))


def test_field_id_of_2_pow_63_gets_400_when_a_table_is_created(rest: RestApi, pg_dsn: str) -> None:
    create_namespace(rest, "ns1")
    before = _events(pg_dsn)
    schema = {"type": "struct", "fields": [{"id": 2**63, "name": "a", "type": "int", "required": False}]}
    _assert_refused(rest.http.post(rest.url("namespaces/ns1/tables"), json={"name": "t", "schema": schema}))
    assert _events(pg_dsn) == before
    assert rest.http.head(rest.url("namespaces/ns1/tables/t")).status_code == 404
