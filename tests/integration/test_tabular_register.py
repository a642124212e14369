"""Register a table or a view from a file: both kinds follow one rule (the stricter copy's) on a bad file."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path
from typing import Any

import pytest

from catalog_es.errors import BadRequestError
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import RegisterTable, RegisterView, handle_register_table, handle_register_view

META = EventMetadata(actor="tester")
DB = Namespace(("db",))


async def _register(kind: str, catalog: Any, location: str) -> None:
    if kind == "table":
        await handle_register_table(RegisterTable(catalog.warehouse_id, DB, "x", location, False, META), catalog.ctx)
    else:
        await handle_register_view(RegisterView(catalog.warehouse_id, DB, "x", location, META), catalog.ctx)


def _refusal(open_catalog: Any, kind: str, write: Any) -> str:
    async def scenario() -> str:
        async with open_catalog() as catalog:
            await handle_create_namespace(CreateNamespace(catalog.warehouse_id, DB, {}, META), catalog.ctx)
            location = write(Path(catalog.warehouse_dir))
            with pytest.raises(BadRequestError) as refused:
                await _register(kind, catalog, location)
            async with catalog.store.connection() as conn:
                assert await catalog.ctx.state.table(conn, catalog.warehouse_id, DB, "x") is None
                assert await catalog.ctx.state.view(conn, catalog.warehouse_id, DB, "x") is None
            return str(refused.value)

    return asyncio.run(scenario())


def _file(name: str, content: bytes):  # type: ignore[no-untyped-def]
    def write(warehouse: Path) -> str:
        path = warehouse / "files" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        return path.as_uri()

    return write


@pytest.mark.parametrize("kind", ["table", "view"])
def test_register_answers_400_with_the_reason_only_when_gzip_file_is_truncated(open_catalog, kind):
    truncated = gzip.compress(b'{"format-version": 2, "secret": "' + b"s3cr3t" * 40 + b'"}')[:-12]
    message = _refusal(open_catalog, kind, _file("00001-a.gz.metadata.json", truncated))
    assert message.endswith("00001-a.gz.metadata.json: EOFError")


@pytest.mark.parametrize("kind", ["table", "view"])
def test_register_does_not_quote_the_path_twice_when_file_is_missing(open_catalog, kind):
    def missing(warehouse: Path) -> str:
        return (warehouse / "files" / "gone.metadata.json").as_uri()

    message = _refusal(open_catalog, kind, missing)
    assert message.endswith("gone.metadata.json: no such file")
    assert message.count("gone.metadata.json") == 1


@pytest.mark.parametrize("kind", ["table", "view"])
def test_register_does_not_quote_the_content_when_file_is_not_a_json_object(open_catalog, kind):
    message = _refusal(open_catalog, kind, _file("list.metadata.json", b'["s3cr3t-value"]'))
    assert message.endswith(f"list.metadata.json is not a {kind} metadata file: not a JSON object")
    assert "s3cr3t" not in message


@pytest.mark.parametrize("kind", ["table", "view"])
def test_register_does_not_quote_the_content_when_file_is_not_valid_metadata(open_catalog, kind):
    message = _refusal(open_catalog, kind, _file("bad.metadata.json", b'{"format-version": "s3cr3t-value"}'))
    assert message.endswith(f"bad.metadata.json is not a valid {kind} metadata file")
    assert "s3cr3t" not in message
