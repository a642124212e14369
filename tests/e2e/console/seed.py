"""A small catalog story for the console's browser test: a namespace, a table with 3 appends and a new column,
a rename, a view; and the instant just before the rename (for the as-of view)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.types import StringType

NAMESPACE = "sales"
OLD_NAME, NEW_NAME = "orders", "orders_v2"
VIEW = "big_orders"


class Story:
    """What the seed made: the warehouse id and the instant before the rename."""

    def __init__(self, warehouse_id: str, before_rename: datetime) -> None:
        self.warehouse_id, self.before_rename = warehouse_id, before_rename


def seed(base_url: str, headers: dict[str, str] | None = None) -> Story:
    props = {"header.Authorization": headers["Authorization"]} if headers else {}
    catalog = load_catalog("console", type="rest", uri=f"{base_url}/catalog", warehouse="demo", **props)
    catalog.create_namespace(NAMESPACE, {"owner": "data-team"})
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("amount", pa.float64())])
    table = catalog.create_table(f"{NAMESPACE}.{OLD_NAME}", schema=schema, properties={"comment": "customer orders"})
    for batch in range(3):
        rows = pa.table({"id": [batch * 10 + i for i in range(10)], "amount": [1.5 * i for i in range(10)]}, schema)
        table.append(rows)
    with table.update_schema() as update:
        update.add_column("channel", StringType(), doc="where the order came from")
    time.sleep(0.05)  # the as-of instant must fall strictly between the last commit and the rename
    before_rename = datetime.now(UTC)
    time.sleep(0.05)
    catalog.rename_table(f"{NAMESPACE}.{OLD_NAME}", f"{NAMESPACE}.{NEW_NAME}")
    with httpx.Client(base_url=f"{base_url}/catalog/v1/", headers=headers, timeout=30) as http:
        prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
        view = {
            "name": VIEW,
            "schema": {
                "type": "struct",
                "schema-id": 0,
                "fields": [{"id": 1, "name": "id", "type": "long", "required": False}],
            },
            "view-version": {
                "version-id": 1,
                "schema-id": 0,
                "timestamp-ms": int(time.time() * 1000),
                "summary": {"engine-name": "spark"},
                "representations": [
                    {
                        "type": "sql",
                        "dialect": "spark",
                        "sql": f"SELECT id FROM {NAMESPACE}.{NEW_NAME} WHERE amount > 10",
                    },
                    {
                        "type": "sql",
                        "dialect": "trino",
                        "sql": f'SELECT "id" FROM {NAMESPACE}.{NEW_NAME} WHERE amount > 10',
                    },
                ],
                "default-namespace": [NAMESPACE],
            },
            "properties": {},
        }
        created = http.post(f"{prefix}/namespaces/{NAMESPACE}/views", json=view)
        created.raise_for_status()
    return Story(warehouse_id=prefix, before_rename=before_rename)
