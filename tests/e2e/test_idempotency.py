"""Idempotency-Key (spec 1.11): a retried mutation gets the original response instead of a conflict."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import assert_error, create_namespace, create_table, load_table, table_url
from tests.e2e.shared_server import module_catalog, warehouse, warehouse_rest  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e


def test_config_advertises_the_idempotency_key_lifetime(rest: RestApi) -> None:
    config = rest.http.get("config", params={"warehouse": rest.warehouse}).json()
    assert config["idempotency-key-lifetime"] == "PT30M"


def test_retried_create_returns_the_original_result_when_the_key_repeats(rest: RestApi) -> None:
    key = str(uuid.uuid4())
    body = {"namespace": ["once"], "properties": {"a": "1"}}

    first = rest.http.post(rest.url("namespaces"), json=body, headers={"Idempotency-Key": key})
    retried = rest.http.post(rest.url("namespaces"), json=body, headers={"Idempotency-Key": key})
    without_key = rest.http.post(rest.url("namespaces"), json=body)

    assert first.status_code == 200
    assert retried.status_code == 200
    assert retried.json() == first.json()
    assert retried.headers["idempotent-replayed"] == "true"
    assert_error(without_key, 409, "AlreadyExistsException")


def test_retried_commit_is_applied_once_when_the_key_repeats(rest: RestApi) -> None:
    create_namespace(rest, "idem")
    assert create_table(rest, "idem", "t").status_code == 200
    base = load_table(rest, "idem", "t")["metadata"]
    commits = 10

    for n in range(commits):
        body = {
            "requirements": [{"type": "assert-current-schema-id", "current-schema-id": base["current-schema-id"]}],
            "updates": [{"action": "set-properties", "updates": {"n": str(n)}}],
        }
        key = str(uuid.uuid4())
        first = rest.http.post(table_url(rest, "idem", "t"), json=body, headers={"Idempotency-Key": key})
        retried = rest.http.post(table_url(rest, "idem", "t"), json=body, headers={"Idempotency-Key": key})

        assert first.status_code == 200, first.text
        assert retried.status_code == 200, "a retry sent right after the response arrived finds it recorded"
        assert retried.headers["idempotent-replayed"] == "true"
        assert retried.json()["metadata-location"] == first.json()["metadata-location"]

    table = load_table(rest, "idem", "t")
    assert table["metadata-location"] == first.json()["metadata-location"]
    assert len(table["metadata"]["metadata-log"]) == commits, "each commit applied once"


def test_deterministic_errors_are_replayed_and_another_operation_with_the_key_runs_on_its_own(rest: RestApi) -> None:
    key = str(uuid.uuid4())
    missing = rest.http.delete(rest.url("namespaces/ghost"), headers={"Idempotency-Key": key})
    create_namespace(rest, "ghost")
    replayed = rest.http.delete(rest.url("namespaces/ghost"), headers={"Idempotency-Key": key})
    other = rest.http.post(rest.url("namespaces"), json={"namespace": ["x"]}, headers={"Idempotency-Key": key})

    assert_error(missing, 404, "NoSuchNamespaceException")
    assert replayed.status_code == 404, "the stored 404 is replayed even though the namespace now exists"
    assert rest.http.get(rest.url("namespaces/ghost")).status_code == 200
    assert other.status_code == 200, "a key reused for another operation is a request of its own"
    assert rest.http.get(rest.url("namespaces/x")).status_code == 200
    malformed = rest.http.post(rest.url("namespaces"), json={"namespace": ["y"]}, headers={"Idempotency-Key": "nope"})
    assert_error(malformed, 400, "BadRequestException")
