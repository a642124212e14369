"""Schema, spec and sort-order ids over raw REST: the catalog reuses equal ones and assigns the next free id."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import SCHEMA, Json, create_namespace, create_table, load_table, table_url
from tests.e2e.shared_server import module_catalog, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


def _replace(rest: RestApi, table_uuid: str, updates: list[Json]) -> Json:
    """A replace commit the way the Java client sends it: only the table's uuid is asserted."""
    response = rest.http.post(
        table_url(rest, "ids", "t"),
        json={"requirements": [{"type": "assert-table-uuid", "uuid": table_uuid}], "updates": updates},
    )
    assert response.status_code == 200, response.text
    metadata: Json = response.json()["metadata"]
    return metadata


def _order(order_id: int, source_id: int, direction: str) -> Json:
    field = {"source-id": source_id, "transform": "identity", "direction": direction, "null-order": "nulls-first"}
    return {"order-id": order_id, "fields": [field]}


def _spec(spec_id: int, source_id: int, name: str) -> Json:
    return {
        "spec-id": spec_id,
        "fields": [{"field-id": 1000, "source-id": source_id, "transform": "identity", "name": name}],
    }


def _schema(schema_id: int, extra: str) -> Json:
    return {**SCHEMA, "schema-id": schema_id, "fields": [*SCHEMA["fields"], {"id": 3, "name": extra, "type": "int"}]}


@pytest.fixture
def table_uuid(rest: RestApi) -> str:
    create_namespace(rest, "ids")
    created = create_table(rest, "ids", "t", {"properties": {"format-version": "2"}})
    assert created.status_code == 200, created.text
    uuid: str = created.json()["metadata"]["table-uuid"]
    return uuid


def test_sort_order_gets_next_free_id_when_a_concurrent_replace_took_the_one_it_asked_for(
    rest: RestApi, table_uuid: str
) -> None:
    _replace(
        rest,
        table_uuid,
        [
            {"action": "add-sort-order", "sort-order": _order(1, 1, "asc")},
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ],
    )

    metadata = _replace(
        rest,
        table_uuid,
        [
            {"action": "add-sort-order", "sort-order": _order(1, 2, "desc")},
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ],
    )

    orders = {order["order-id"]: [field["source-id"] for field in order["fields"]] for order in metadata["sort-orders"]}
    assert orders == {0: [], 1: [1], 2: [2]}
    assert metadata["default-sort-order-id"] == 2


def test_equal_sort_order_is_reused_and_minus_one_means_its_id(rest: RestApi, table_uuid: str) -> None:
    _replace(rest, table_uuid, [{"action": "add-sort-order", "sort-order": _order(1, 1, "asc")}])
    _replace(rest, table_uuid, [{"action": "add-sort-order", "sort-order": _order(2, 2, "desc")}])

    metadata = _replace(
        rest,
        table_uuid,
        [
            {"action": "add-sort-order", "sort-order": _order(3, 1, "asc")},
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ],
    )

    assert sorted(order["order-id"] for order in metadata["sort-orders"]) == [0, 1, 2]
    assert metadata["default-sort-order-id"] == 1


def test_partition_spec_gets_next_free_id_when_a_concurrent_replace_took_the_one_it_asked_for(
    rest: RestApi, table_uuid: str
) -> None:
    _replace(
        rest,
        table_uuid,
        [{"action": "add-spec", "spec": _spec(1, 1, "id")}, {"action": "set-default-spec", "spec-id": -1}],
    )

    metadata = _replace(
        rest,
        table_uuid,
        [{"action": "add-spec", "spec": _spec(1, 2, "name")}, {"action": "set-default-spec", "spec-id": -1}],
    )

    specs = {spec["spec-id"]: [field["name"] for field in spec["fields"]] for spec in metadata["partition-specs"]}
    assert specs == {0: [], 1: ["id"], 2: ["name"]}
    assert metadata["default-spec-id"] == 2


def test_schema_gets_next_free_id_when_taken_and_equal_schema_is_reused(rest: RestApi, table_uuid: str) -> None:
    _replace(
        rest,
        table_uuid,
        [{"action": "add-schema", "schema": _schema(1, "x")}, {"action": "set-current-schema", "schema-id": -1}],
    )

    metadata = _replace(
        rest,
        table_uuid,
        [{"action": "add-schema", "schema": _schema(1, "y")}, {"action": "set-current-schema", "schema-id": -1}],
    )
    reverted = _replace(
        rest,
        table_uuid,
        [
            {"action": "add-schema", "schema": {**SCHEMA, "schema-id": 3}},
            {"action": "set-current-schema", "schema-id": -1},
        ],
    )

    schemas = {schema["schema-id"]: schema["fields"][-1]["name"] for schema in metadata["schemas"]}
    assert schemas == {0: "name", 1: "x", 2: "y"}
    assert metadata["current-schema-id"] == 2
    assert sorted(schema["schema-id"] for schema in reverted["schemas"]) == [0, 1, 2]
    assert reverted["current-schema-id"] == 0
    assert load_table(rest, "ids", "t")["metadata"] == reverted
