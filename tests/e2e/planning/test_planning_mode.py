"""`scan-planning-mode` per warehouse (management API) and per table (property): what /config and loadTable say,
and what pyiceberg 0.12 then does."""

from __future__ import annotations

from typing import Any

import httpx
import pyarrow as pa
import pytest
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.e2e.conftest import RunningCatalog

pytestmark = pytest.mark.e2e

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False))
PROPERTY = "catalog-es.scan-planning-mode"


def _warehouse_id(catalog: RunningCatalog) -> str:
    listed = httpx.get(f"{catalog.base_url}/management/v1/warehouse", timeout=30).json()["warehouses"]
    return str(next(item["id"] for item in listed if item["name"] == "demo"))


def _set_mode(catalog: RunningCatalog, warehouse: str, body: Any) -> httpx.Response:
    url = f"{catalog.base_url}/management/v1/warehouse/{warehouse}/scan-planning"
    return httpx.post(url, json=body, timeout=30)


def _shown_mode(catalog: RunningCatalog, warehouse: str) -> str | None:
    got = httpx.get(f"{catalog.base_url}/management/v1/warehouse/{warehouse}", timeout=30).json()
    listed = httpx.get(f"{catalog.base_url}/management/v1/warehouse", timeout=30).json()["warehouses"]
    assert [item["scan-planning"] for item in listed if item["id"] == warehouse] == [got["scan-planning"]]
    return got["scan-planning"]  # type: ignore[no-any-return]


def _config_override(catalog: RunningCatalog) -> str | None:
    config = httpx.get(f"{catalog.catalog_uri}/v1/config", params={"warehouse": "demo"}, timeout=30).json()
    return config["overrides"].get("scan-planning-mode")  # type: ignore[no-any-return]


def _load_config(catalog: RunningCatalog, name: str) -> str | None:
    with httpx.Client(base_url=f"{catalog.catalog_uri}/v1/", timeout=30) as http:
        prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
        loaded = http.get(f"{prefix}/namespaces/modes/tables/{name}")
        assert loaded.status_code == 200, loaded.text
        return loaded.json().get("config", {}).get("scan-planning-mode")  # type: ignore[no-any-return]


def _pyiceberg(catalog: RunningCatalog) -> Catalog:
    return load_catalog(f"c{id(catalog)}", type="rest", uri=catalog.catalog_uri, warehouse="demo")


def test_warehouse_mode_decides_config_and_table_property_decides_load_table(catalog: RunningCatalog) -> None:
    ice = _pyiceberg(catalog)
    ice.create_namespace("modes")
    plain = ice.create_table("modes.plain", schema=SCHEMA)
    plain.append(pa.Table.from_pylist([{"id": i} for i in range(5)], schema=pa.schema([pa.field("id", pa.int64())])))
    ice.create_table("modes.local", schema=SCHEMA, properties={PROPERTY: "client"})
    ice.create_table("modes.remote", schema=SCHEMA, properties={PROPERTY: "server"})
    warehouse = _warehouse_id(catalog)

    # nothing set: the server's setting (`client`) is said nowhere, but a table's own `server` is
    assert _shown_mode(catalog, warehouse) is None
    assert _config_override(catalog) is None
    assert (_load_config(catalog, "plain"), _load_config(catalog, "local")) == (None, None)
    assert _load_config(catalog, "remote") == "server"
    assert not ice.load_table("modes.plain").scan()._should_use_server_side_planning()

    assert _set_mode(catalog, warehouse, {"mode": "server"}).status_code == 204
    assert _shown_mode(catalog, warehouse) == "server"
    assert _config_override(catalog) == "server"
    # the table property wins in loadTable: `client` is said outright, since /config said `server`
    assert [_load_config(catalog, name) for name in ("plain", "local", "remote")] == ["server", "client", "server"]
    fresh = _pyiceberg(catalog)  # pyiceberg 0.12 reads the mode from the catalog's properties (/config) only
    table = fresh.load_table("modes.plain")
    assert table.scan()._should_use_server_side_planning()
    assert sorted(row["id"] for row in table.scan().to_arrow().to_pylist()) == [0, 1, 2, 3, 4]

    assert _set_mode(catalog, warehouse, {"mode": "client"}).status_code == 204
    assert _config_override(catalog) is None
    assert [_load_config(catalog, name) for name in ("plain", "local", "remote")] == [None, None, "server"]

    assert _set_mode(catalog, warehouse, {}).status_code == 204  # absent: back to the server's setting
    assert _shown_mode(catalog, warehouse) is None
    events = httpx.get(
        f"{catalog.base_url}/management/v1/events", params={"type": "warehouse.scan-planning-updated"}, timeout=30
    ).json()["events"]
    assert len(events) == 3


def test_scan_planning_route_refuses_a_bad_mode_and_a_missing_warehouse(catalog: RunningCatalog) -> None:
    warehouse = _warehouse_id(catalog)
    for body in ({"mode": "sometimes"}, {"mode": True}, {"mode": "server", "colour": "red"}, ["server"]):
        refused = _set_mode(catalog, warehouse, body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["type"] == "BadRequestException"
    missing = _set_mode(catalog, "00000000-0000-0000-0000-000000000404", {"mode": "server"})
    assert missing.status_code == 404, missing.text


def test_create_and_register_say_the_mode_as_load_table_does(catalog: RunningCatalog) -> None:
    ice = _pyiceberg(catalog)
    ice.create_namespace("made")
    warehouse = _warehouse_id(catalog)
    with httpx.Client(base_url=f"{catalog.catalog_uri}/v1/", timeout=30) as http:
        prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]

        def created(name: str, properties: dict[str, str]) -> str | None:
            body = {"name": name, "schema": SCHEMA.model_dump(by_alias=True), "properties": properties}
            made = http.post(f"{prefix}/namespaces/made/tables", json=body)
            assert made.status_code == 200, made.text
            config = made.json().get("config", {})
            loaded = http.get(f"{prefix}/namespaces/made/tables/{name}").json().get("config", {})
            assert config.get("scan-planning-mode") == loaded.get("scan-planning-mode")
            return config.get("scan-planning-mode")  # type: ignore[no-any-return]

        assert created("plain", {}) is None
        assert created("remote", {PROPERTY: "server"}) == "server"
        assert _set_mode(catalog, warehouse, {"mode": "server"}).status_code == 204
        assert created("inherits", {}) == "server"
        assert created("local", {PROPERTY: "client"}) == "client"
        location = http.get(f"{prefix}/namespaces/made/tables/local").json()["metadata-location"]
        ice.drop_table("made.local")
        registered = http.post(
            f"{prefix}/namespaces/made/register", json={"name": "again", "metadata-location": location}
        )
        assert registered.status_code == 200, registered.text
        assert registered.json()["config"]["scan-planning-mode"] == "client"
    assert _set_mode(catalog, warehouse, {}).status_code == 204
