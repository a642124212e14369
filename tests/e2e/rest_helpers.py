"""Raw Iceberg REST request bodies and checks shared by the wire-level e2e tests."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import httpx

from tests.e2e.conftest import RestApi

Json = dict[str, Any]

SCHEMA: Json = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "type": "long", "required": False},
        {"id": 2, "name": "name", "type": "string", "required": False},
    ],
}


def ns(*parts: str) -> str:
    """A namespace as one URL path segment: parts percent-encoded and joined by %1F."""
    return "%1F".join(quote(part, safe="") for part in parts)


def create_namespace(rest: RestApi, *parts: str) -> None:
    response = rest.http.post(rest.url("namespaces"), json={"namespace": list(parts)})
    assert response.status_code == 200, response.text


def create_table(rest: RestApi, namespace: str, name: str, extra: Json | None = None) -> httpx.Response:
    """POST createTable with SCHEMA; `extra` adds request fields such as `location` or `stage-create`."""
    body = {"name": name, "schema": SCHEMA, **(extra or {})}
    return rest.http.post(rest.url(f"namespaces/{ns(namespace)}/tables"), json=body)


def table_url(rest: RestApi, namespace: str, name: str) -> str:
    return rest.url(f"namespaces/{ns(namespace)}/tables/{quote(name, safe='')}")


def load_table(rest: RestApi, namespace: str, name: str) -> Json:
    response = rest.http.get(table_url(rest, namespace, name))
    assert response.status_code == 200, response.text
    body: Json = response.json()
    return body


def main_snapshot_id(metadata: Json) -> int | None:
    main = metadata.get("refs", {}).get("main")
    return None if main is None else int(main["snapshot-id"])


def append_snapshot_updates(metadata: Json, snapshot_id: int) -> list[Json]:
    """`add-snapshot` + `set-snapshot-ref(main)`: an append on top of the current main (no data files needed)."""
    parent = main_snapshot_id(metadata)
    snapshot: Json = {
        "snapshot-id": snapshot_id,
        "sequence-number": metadata.get("last-sequence-number", 0) + 1,
        "timestamp-ms": max(int(time.time() * 1000), metadata["last-updated-ms"] + 1),
        "manifest-list": f"{metadata['location']}/metadata/snap-{snapshot_id}.avro",
        "summary": {"operation": "append"},
        "schema-id": metadata["current-schema-id"],
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    return [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
    ]


def assert_error(response: httpx.Response, status: int, error_type: str) -> str:
    """The exact Iceberg error envelope with this status and type; returns the message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"message", "type", "code"}, body
    assert body["error"]["type"] == error_type, body
    assert body["error"]["code"] == status, body
    message = body["error"]["message"]
    assert isinstance(message, str)
    assert message
    return message
