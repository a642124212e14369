"""Schemathesis over the management API's own OpenAPI document: no generated request may get a 5xx.

The server runs in embedded mode in a temporary directory (its file storage roots, where the
setting exists, under that directory too), with a role and a user as fixtures so the generated
requests reach the handlers rather than stopping at 404. Excluded: the two operations that take a
storage profile (create warehouse, update storage): they make the server reach the storage a body
names (a directory anywhere, an S3 endpoint on any host), which this sandbox cannot confine to
loopback; their hostile inputs have tests of their own. A fixed seed and a bounded number of
examples per operation keep the run short and repeatable.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from api.settings import Settings
from tests.e2e.conftest import start_catalog, stop_catalog
from tests.e2e.schemathesis_run import run_schemathesis

pytestmark = pytest.mark.e2e

EXAMPLES_PER_OPERATION = 25
TOUCHES_STORAGE = ("ManagementV1WarehouseCreateWarehouse", "ManagementV1WarehouseWarehouseIdStorageUpdateStorage")


def _sandbox_env(root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("CATALOG_ES__")}
    if "file_storage_roots" in Settings.__struct_fields__:
        root.mkdir(parents=True)
        env["CATALOG_ES__FILE_STORAGE_ROOTS"] = str(root)
    return env


def _fixtures(base_url: str) -> dict[str, str]:
    """Ids for the path parameters: the default warehouse, a role and a user."""
    with httpx.Client(base_url=f"{base_url}/management/v1/", timeout=30) as http:
        warehouse_id = http.get("warehouse").json()["warehouses"][0]["warehouse-id"]
        role = http.post("role", json={"name": "fuzz-role"})
        assert role.status_code in {200, 201}, role.text
        user = http.post("user", json={"id": "oidc~fuzz", "name": "fuzz", "user-type": "human"})
        assert user.status_code in {200, 201}, user.text
    return {
        "path.warehouse_id": warehouse_id,
        "path.role_id": role.json()["id"],
        "path.user_id": user.json()["id"],
        "path.object_id": warehouse_id,
    }


@pytest.mark.timeout(900)  # the schemathesis run's own bound is 600 s; 3-4 min quiet, more beside a busy suite
def test_schemathesis_finds_no_server_error_when_run_against_the_management_api(tmp_path: Path) -> None:
    catalog = start_catalog(tmp_path / "data", _sandbox_env(tmp_path / "data" / "warehouse"))
    try:
        parameters = _fixtures(catalog.base_url)
        run_schemathesis(
            f"{catalog.base_url}/api-docs/management/v1/openapi.json",
            catalog.base_url,
            tmp_path,
            parameters=parameters,
            checks="not_a_server_error",
            examples_per_operation=EXAMPLES_PER_OPERATION,
            exclude_operations=TOUCHES_STORAGE,
            timeout=600,
        )
    finally:
        stop_catalog(catalog)
