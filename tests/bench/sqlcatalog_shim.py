"""The benchmark's naive peer: a thin Iceberg REST shim over pyiceberg's `SqlCatalog` on PostgreSQL.

The "toy REST server on SqlCatalog + PG15" that Lakekeeper users compared against: every request runs
the synchronous `SqlCatalog` call in a worker thread; loads read metadata.json from the warehouse, commits
write a new one and compare-and-swap the location row. No views, no multi-table transactions, no paging.

Run: `python -m tests.bench.sqlcatalog_shim --dsn postgresql://... --warehouse /tmp/wh --port 8300`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import uvicorn
from litestar import Litestar, Request, Response, get, head, post
from litestar.exceptions import HTTPException
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.schema import Schema
from pyiceberg.table import CommitTableRequest

_STATUS = {
    NoSuchTableError: 404,
    NoSuchNamespaceError: 404,
    NamespaceAlreadyExistsError: 409,
    TableAlreadyExistsError: 409,
    CommitFailedException: 409,
}


def _error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    status = next((code for kind, code in _STATUS.items() if isinstance(exc, kind)), 500)
    if isinstance(exc, HTTPException):
        status = exc.status_code
    body = {"error": {"message": str(exc), "type": type(exc).__name__, "code": status}}
    return Response(body, status_code=status)


async def _off(function: Any, *args: Any, **kwargs: Any) -> Any:
    """SqlCatalog is synchronous: every call runs in a worker thread, like a sync handler would."""
    return await asyncio.to_thread(function, *args, **kwargs)


def _ns(namespace: str) -> tuple[str, ...]:
    return tuple(namespace.split("\x1f"))


def _json(raw: bytes) -> Response[bytes]:
    return Response(raw, media_type="application/json")


def create_shim(catalog: SqlCatalog) -> Litestar:
    """The REST routes the benchmark uses, each a direct call into `catalog` (in a thread)."""

    @get("/v1/config")
    async def config() -> dict[str, Any]:
        return {"defaults": {}, "overrides": {}}

    @get("/v1/namespaces")
    async def list_namespaces(parent: str | None = None) -> dict[str, Any]:
        found = await _off(catalog.list_namespaces, _ns(parent) if parent else ())
        return {"namespaces": [list(ns) for ns in found]}

    @post("/v1/namespaces", status_code=200)
    async def create_namespace(data: dict[str, Any]) -> dict[str, Any]:
        await _off(catalog.create_namespace, tuple(data["namespace"]), data.get("properties") or {})
        return {"namespace": data["namespace"], "properties": data.get("properties") or {}}

    @get("/v1/namespaces/{namespace:str}")
    async def load_namespace(namespace: str) -> dict[str, Any]:
        return {
            "namespace": list(_ns(namespace)),
            "properties": await _off(catalog.load_namespace_properties, _ns(namespace)),
        }

    @head("/v1/namespaces/{namespace:str}", status_code=204)
    async def namespace_exists(namespace: str) -> None:
        if not await _off(catalog.namespace_exists, _ns(namespace)):
            raise NoSuchNamespaceError(namespace)

    @post("/v1/namespaces/{namespace:str}/properties", status_code=200)
    async def update_properties(namespace: str, data: dict[str, Any]) -> dict[str, Any]:
        summary = await _off(
            catalog.update_namespace_properties,
            _ns(namespace),
            set(data.get("removals") or []),
            data.get("updates") or {},
        )
        return {"updated": summary.updated, "removed": summary.removed, "missing": summary.missing}

    @get("/v1/namespaces/{namespace:str}/tables")
    async def list_tables(namespace: str) -> dict[str, Any]:
        found = await _off(catalog.list_tables, _ns(namespace))
        return {"identifiers": [{"namespace": list(ident[:-1]), "name": ident[-1]} for ident in found]}

    @post("/v1/namespaces/{namespace:str}/tables", status_code=200)
    async def create_table(namespace: str, data: dict[str, Any]) -> Response[bytes]:
        table = await _off(
            catalog.create_table,
            (*_ns(namespace), data["name"]),
            Schema.model_validate(data["schema"]),
            data.get("location"),
            properties=data.get("properties") or {},
        )
        return _loaded(table.metadata_location, table.metadata.model_dump_json())

    @get("/v1/namespaces/{namespace:str}/tables/{table:str}")
    async def load_table(namespace: str, table: str) -> Response[bytes]:
        loaded = await _off(catalog.load_table, (*_ns(namespace), table))
        return _loaded(loaded.metadata_location, loaded.metadata.model_dump_json())

    @head("/v1/namespaces/{namespace:str}/tables/{table:str}", status_code=204)
    async def table_exists(namespace: str, table: str) -> None:
        if not await _off(catalog.table_exists, (*_ns(namespace), table)):
            raise NoSuchTableError(table)

    @post("/v1/namespaces/{namespace:str}/tables/{table:str}", status_code=200)
    async def commit_table(namespace: str, table: str, body: bytes) -> Response[bytes]:
        identifier = {"namespace": list(_ns(namespace)), "name": table}
        request = CommitTableRequest.model_validate(json.loads(body) | {"identifier": identifier})

        def load_and_commit() -> Any:
            current = catalog.load_table((*_ns(namespace), table))
            return catalog.commit_table(current, request.requirements, request.updates)

        committed = await _off(load_and_commit)
        return _loaded(committed.metadata_location, committed.metadata.model_dump_json())

    return Litestar(
        route_handlers=[
            config,
            list_namespaces,
            create_namespace,
            load_namespace,
            namespace_exists,
            update_properties,
            list_tables,
            create_table,
            load_table,
            table_exists,
            commit_table,
        ],
        exception_handlers={Exception: _error},
        openapi_config=None,
        logging_config=None,
    )


def _loaded(location: str | None, metadata_json: str) -> Response[bytes]:
    return _json(
        b'{"metadata-location":' + json.dumps(location).encode() + b',"metadata":' + metadata_json.encode() + b"}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="PostgreSQL URI (postgresql://...)")
    parser.add_argument("--warehouse", required=True, type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8300)
    args = parser.parse_args()
    args.warehouse.mkdir(parents=True, exist_ok=True)
    uri = "postgresql+psycopg://" + args.dsn.split("://", 1)[1]
    catalog = SqlCatalog("shim", uri=uri, warehouse=args.warehouse.resolve().as_uri())
    uvicorn.run(create_shim(catalog), host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
