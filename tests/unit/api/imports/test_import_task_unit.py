"""The import task's edges without services: which source properties the route refuses, and failure messages
with every property value blotted out."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest

from api.imports.task import _blotted
from api.management.import_wire import ImportCatalogRequest
from catalog_es.errors import BadRequestError
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.storage.outbound import EndpointPolicy
from commands.import_sources import check_source_reachable


def _request(source: dict[str, str], **more: object) -> ImportCatalogRequest:
    return msgspec.convert({"source": source, **more}, ImportCatalogRequest)


@pytest.mark.parametrize(
    "source",
    [
        {"type": "sql", "uri": "sqlite://", "py-io-impl": "os.system"},
        {"py-catalog-impl": "builtins.object"},
        {"type": "nonsense", "uri": "http://x"},
        {"warehouse": "s3://bucket"},
    ],
)
def test_checked_source_refuses_when_properties_name_code_or_no_known_catalog(source: dict[str, str]) -> None:
    with pytest.raises(BadRequestError):
        _request(source).checked_source()


def test_checked_source_refuses_when_a_namespace_has_no_level() -> None:
    with pytest.raises(BadRequestError):
        _request({"type": "rest", "uri": "http://x"}, namespaces=[[]]).checked_source()


def test_checked_source_keeps_properties_when_they_name_a_known_catalog() -> None:
    source = {"type": "glue", "glue.region": "eu-west-1", "glue.secret-access-key": "s3cr3t"}
    assert _request(source).checked_source() == source


def test_blotted_hides_every_property_value_when_an_error_repeats_one() -> None:
    properties = {"type": "rest", "uri": "http://u:pw-1234@host", "credential": "id:secret-value"}
    message = "OAuthError: bad credential id:secret-value at http://u:pw-1234@host (rest)"
    assert _blotted(message, properties) == "OAuthError: bad credential *** at *** (rest)"


def test_source_check_refuses_with_400_when_an_address_is_malformed() -> None:
    ctx: Any = SimpleNamespace(endpoints=EndpointPolicy(), file_roots=FileStorageRoots())  # all the check reads
    for properties in ({"uri": "http://[broken"}, {"uri": "sqlite:////tmp/a\x00b.db"}, {"uri": "sqlite:///rel.db"}):
        with pytest.raises(BadRequestError):
            asyncio.run(check_source_reachable(ctx, properties))


def test_source_check_refuses_a_bare_host_when_it_is_not_allowed() -> None:
    ctx: Any = SimpleNamespace(endpoints=EndpointPolicy(allowed_hosts=("127.0.0.1",)), file_roots=FileStorageRoots())
    with pytest.raises(BadRequestError, match=r"gcs\.service\.host"):
        asyncio.run(check_source_reachable(ctx, {"type": "sql", "gcs.service.host": "10.0.0.7:4443"}))
    asyncio.run(check_source_reachable(ctx, {"type": "rest", "uri": "http://127.0.0.1:19120/catalog"}))
