"""Conformance with the official Iceberg REST spec 1.11, checked by schemathesis (a tool we did not write).

The server runs in embedded mode with a namespace `ns1` and a table `t1` as fixtures. Required: no
server error (5xx) and no response-schema violation, over a pinned number of examples per operation
with a fixed seed. What is excluded, and why:

- Spec quirk (iceberg-rest.md §12): 18 responses declare the bare `ErrorModel` instead of the wrapped
  `IcebergErrorResponse` every client parses; the test runs against a copy of the spec, made at test
  time, in which those references point to `IcebergErrorResponse`.
- Operations not served for this file warehouse: remote signing (signRequest) and vended credentials
  (loadCredentials), which belong to S3 storage;
  the deprecated OAuth token endpoint (`--exclude-deprecated`).
- Checks beyond the two required ones plus content type: `positive_data_acceptance` and
  `status_code_conformance` flag semantic refusals the spec cannot express (a location without a
  scheme, a namespace with no levels, a parent that does not exist → 404 on createNamespace), and
  `ignored_auth` needs authentication, which is off in embedded mode.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.e2e.conftest import start_catalog, stop_catalog
from tests.e2e.schemathesis_run import run_schemathesis

pytestmark = pytest.mark.e2e

# A copy of the official spec kept in the repository, so the run never depends on a checkout beside it.
SPEC = Path(__file__).resolve().parent / "openapi" / "rest-catalog-open-api-1.11.0.yaml"
EXAMPLES_PER_OPERATION = 50
NOT_IMPLEMENTED = (
    "signRequest",
    "loadCredentials",
)
BARE_ERROR = "#/components/schemas/ErrorModel"
WRAPPED_ERROR = "#/components/schemas/IcebergErrorResponse"


def _wrap_bare_error_models(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("$ref") == BARE_ERROR:
            node["$ref"] = WRAPPED_ERROR
        for value in node.values():
            _wrap_bare_error_models(value)
    elif isinstance(node, list):
        for value in node:
            _wrap_bare_error_models(value)


def _patched_spec(target: Path) -> Path:
    spec = yaml.safe_load(SPEC.read_text())
    _wrap_bare_error_models(spec["paths"])
    _wrap_bare_error_models(spec["components"]["responses"])
    target.write_text(yaml.safe_dump(spec, sort_keys=False))
    return target


def _fixtures(catalog_uri: str) -> str:
    with httpx.Client(base_url=f"{catalog_uri}/v1/", timeout=30) as http:
        prefix = str(http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"])
        assert http.post(f"{prefix}/namespaces", json={"namespace": ["ns1"]}).status_code == 200
        schema = {"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int", "required": False}]}
        assert http.post(f"{prefix}/namespaces/ns1/tables", json={"name": "t1", "schema": schema}).status_code == 200
    return prefix


@pytest.mark.timeout(1200)  # schemathesis' own bound (schemathesis_run): 5 min quiet, more beside a busy suite
def test_schemathesis_finds_no_server_error_and_no_schema_violation_when_run_against_embedded_server(
    tmp_path: Path,
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}
    catalog = start_catalog(tmp_path / "data", env)
    try:
        prefix = _fixtures(catalog.catalog_uri)
        spec = _patched_spec(tmp_path / "spec.yaml")
        run_schemathesis(
            str(spec),
            catalog.catalog_uri,
            tmp_path,
            parameters={"path.prefix": prefix, "path.namespace": "ns1", "path.table": "t1"},
            checks="not_a_server_error,response_schema_conformance,content_type_conformance",
            examples_per_operation=EXAMPLES_PER_OPERATION,
            exclude_operations=NOT_IMPLEMENTED,
            extra=["--exclude-deprecated"],
        )
    finally:
        stop_catalog(catalog)
