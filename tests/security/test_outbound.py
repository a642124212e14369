"""Outbound connections on a caller's behalf (issue #13, item 3): refused before any IO, nothing reflected back."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import RunningCatalog, start_catalog, stop_catalog
from tests.e2e.shared_server import module_catalog  # noqa: F401 - fixture
from tests.security.hostile_s3 import SECRET, hostile_endpoint
from tests.security.isolated_server import METADATA_ALIAS, IsolatedCatalog

CREDENTIAL = {
    "type": "s3",
    "credential-type": "access-key",
    "access-key-id": "catalog-es-test-key",
    "secret-access-key": "catalog-es-test-secret",
}
AMBIENT_KEY_ID = "AKIAAMBIENTCHAINKEY01"


def _warehouse(endpoint: str, *, credential: dict[str, str] | None = CREDENTIAL) -> dict[str, Any]:
    profile = {"type": "s3", "bucket": "lake", "region": "us-east-1", "endpoint": endpoint, "flavor": "s3-compat"}
    return {
        "warehouse-name": f"w-{uuid.uuid4().hex[:8]}",
        "storage-profile": profile,
        "storage-credential": credential,
    }


def _refused(response: httpx.Response) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("BadRequestException", 400)
    return str(error["message"])


@pytest.fixture
def api(module_catalog: RunningCatalog) -> Iterator[httpx.Client]:  # noqa: F811
    """The module's one server (tests/e2e/shared_server.py): its tests create (or are refused) warehouses of
    their own names."""
    with httpx.Client(base_url=module_catalog.base_url, timeout=60) as http:
        yield http


def _file_warehouse(http: httpx.Client, location: Path) -> str:
    """A new file warehouse at `location`, under a name no other test uses; returns its REST prefix."""
    name = f"w-{uuid.uuid4().hex[:12]}"
    body = {"warehouse-name": name, "storage-profile": {"type": "file", "location": str(location)}}
    created = http.post("/management/v1/warehouse", json=body)
    assert created.status_code in (200, 201), created.text
    config = http.get("/catalog/v1/config", params={"warehouse": name})
    assert config.status_code == 200, config.text
    return str(config.json()["defaults"]["prefix"])


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://169.254.169.254",
        "http://169.254.170.2:9000",
        "http://[fd00:ec2::254]",
        "http://100.100.100.200",
        "http://metadata.google.internal",
        "http://[fe80::1]:9000",
        "http://[::ffff:169.254.169.254]",
        f"http://{METADATA_ALIAS}:9000",  # allow-listed, but resolves to the metadata address
    ],
)
def test_metadata_and_link_local_endpoints_are_refused_before_any_connection_when_creating_a_warehouse(
    module_isolated_catalog: IsolatedCatalog, endpoint: str
) -> None:
    before = module_isolated_catalog.attempts_outside()
    with module_isolated_catalog.client() as http:
        response = http.post("/management/v1/warehouse", json=_warehouse(endpoint))
    assert "not allowed" in _refused(response)
    assert module_isolated_catalog.attempts_outside() == before  # not even a DNS query left the server


@pytest.mark.parametrize("location", ["s3://foreign-bucket/stolen", "gs://foreign-bucket/stolen", "abfss://c@a/x"])
def test_file_warehouse_refuses_an_object_store_location_before_any_io_when_a_commit_sets_it(
    module_isolated_catalog: IsolatedCatalog, location: str, tmp_path: Path
) -> None:
    with module_isolated_catalog.client() as http:
        prefix = _file_warehouse(http, tmp_path / "warehouse")
        base = f"/catalog/v1/{prefix}"
        assert http.post(f"{base}/namespaces", json={"namespace": ["ns"]}).status_code == 200
        schema = {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1, "name": "x", "type": "long", "required": False}],
        }
        created = http.post(f"{base}/namespaces/ns/tables", json={"name": "t", "schema": schema})
        assert created.status_code == 200, created.text
        before = module_isolated_catalog.attempts_outside()
        commit = {"requirements": [], "updates": [{"action": "set-location", "location": location}]}
        response = http.post(f"{base}/namespaces/ns/tables/t", json=commit)
        assert 400 <= response.status_code < 500, response.text
        assert response.json()["error"]["code"] == response.status_code
        after = http.get(f"{base}/namespaces/ns/tables/t").json()["metadata"]["location"]
    assert module_isolated_catalog.attempts_outside() == before
    assert after == created.json()["metadata"]["location"]


def test_endpoint_outside_the_allow_list_is_refused_without_contacting_it(api: httpx.Client) -> None:
    with hostile_endpoint("127.0.0.2") as target:  # loopback, but not on the test servers' allow-list
        message = _refused(api.post("/management/v1/warehouse", json=_warehouse(target.url)))
    assert "not allowed" in message
    assert "CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS" in message
    assert target.connections == []


@pytest.mark.parametrize("code", ["AccessDenied", f"X{SECRET}"])
def test_remote_error_text_never_reaches_the_caller_when_the_endpoint_is_hostile(api: httpx.Client, code: str) -> None:
    with hostile_endpoint("127.0.0.1", code=code) as target:
        response = api.post("/management/v1/warehouse", json=_warehouse(target.url))
    message = _refused(response)
    assert target.requests  # the endpoint was allowed and did answer
    assert SECRET not in response.text
    assert "leaked" not in response.text
    assert message.startswith("Storage access check failed")
    assert ("AccessDenied" in message) == (code == "AccessDenied")  # a known S3 error code at most


@pytest.fixture
def ambient_catalog(pg_dsn: str, tmp_path: Path) -> Iterator[RunningCatalog]:
    """A server whose environment holds AWS keys, as an operator's shell or an instance role would."""
    env = {**os.environ, "CATALOG_ES__PG_DSN": pg_dsn}
    env |= {"AWS_ACCESS_KEY_ID": AMBIENT_KEY_ID, "AWS_SECRET_ACCESS_KEY": "ambient-secret"}
    running = start_catalog(tmp_path / "data", env)
    yield running
    stop_catalog(running)


def test_storage_without_a_credential_is_accessed_anonymously_never_with_ambient_keys(
    ambient_catalog: RunningCatalog,
) -> None:
    with hostile_endpoint("127.0.0.1") as target, httpx.Client(base_url=ambient_catalog.base_url) as http:
        response = http.post("/management/v1/warehouse", json=_warehouse(target.url, credential=None))
    _refused(response)
    assert target.requests
    assert all("authorization" not in {name.lower() for name in headers} for headers in target.requests)
    assert AMBIENT_KEY_ID not in str(target.requests)
