"""Format-version 3 tables over raw REST: created, committed, encryption keys added and removed."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.e2e.conftest import RestApi
from tests.e2e.rest_helpers import assert_error, create_namespace, create_table, load_table, table_url

pytestmark = pytest.mark.e2e


def _stored(metadata_location: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(Path(unquote(urlsplit(metadata_location).path)).read_text())
    return document


def _add(key_id: str) -> dict[str, object]:
    return {"action": "add-encryption-key", "encryption-key": {"key-id": key_id, "encrypted-key-metadata": "AAEC"}}


def test_encryption_keys_are_added_and_removed_when_table_is_format_version_3(rest: RestApi) -> None:
    create_namespace(rest, "vault")
    created = create_table(rest, "vault", "secrets", {"properties": {"format-version": "3"}})
    assert created.status_code == 200, created.text
    assert created.json()["metadata"]["format-version"] == 3
    url = table_url(rest, "vault", "secrets")

    first = rest.http.post(url, json={"updates": [_add("k1")]})
    second = rest.http.post(url, json={"updates": [_add("k2"), {"action": "remove-encryption-key", "key-id": "k1"}]})

    assert first.status_code == 200, first.text
    assert second.status_code == 200, second.text
    loaded = load_table(rest, "vault", "secrets")
    assert [key["key-id"] for key in loaded["metadata"]["encryption-keys"]] == ["k2"]
    assert _stored(loaded["metadata-location"])["encryption-keys"] == loaded["metadata"]["encryption-keys"]


def test_encryption_key_commit_is_refused_when_table_is_format_version_2(rest: RestApi) -> None:
    create_namespace(rest, "plain")
    assert create_table(rest, "plain", "t", {"properties": {"format-version": "2"}}).status_code == 200
    before = load_table(rest, "plain", "t")

    refused = rest.http.post(table_url(rest, "plain", "t"), json={"updates": [_add("k1")]})

    assert_error(refused, 400, "BadRequestException")
    assert load_table(rest, "plain", "t")["metadata-location"] == before["metadata-location"]
