"""The management API against a running server: bootstrap, info, projects, warehouses, docs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.e2e.conftest import RunningCatalog

NIL = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
def api(catalog: RunningCatalog) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=catalog.base_url, timeout=30) as client:
        yield client


def _error(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    error: dict[str, object] = response.json()["error"]
    assert error["code"] == status
    assert isinstance(error["message"], str)
    assert isinstance(error["type"], str)
    return error


def _file_profile(path: Path) -> dict[str, str]:
    return {"type": "file", "location": str(path)}


def _create_warehouse(api: httpx.Client, name: str, location: Path, project: str | None = None) -> str:
    headers = {"x-project-id": project} if project else {}
    body = {"warehouse-name": name, "storage-profile": _file_profile(location)}
    response = api.post("/management/v1/warehouse", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["warehouse-id"])


def _config(api: httpx.Client, warehouse: str, project: str | None = None) -> httpx.Response:
    headers = {"x-project-id": project} if project else {}
    return api.get("/catalog/v1/config", params={"warehouse": warehouse}, headers=headers)


def test_bootstrap_refused_when_info_says_bootstrapped(api: httpx.Client) -> None:
    """Allow-all: serve made the default project, so /info says bootstrapped and a bootstrap call agrees (409)."""
    before = api.get("/management/v1/info").json()
    assert before["bootstrapped"] is True  # serve made the default project; allow-all names no admin
    assert before["server-id"] is None
    assert before["default-project-id"] == NIL
    assert before["authz-backend"] == "allowall"
    assert before["version"]

    _error(api.post("/management/v1/bootstrap", json={"accept-terms-of-use": False}), 400)
    refused = _error(api.post("/management/v1/bootstrap", json={"accept-terms-of-use": True}), 409)
    assert "already bootstrapped" in str(refused["message"])
    _error(api.post("/management/v1/bootstrap", json={"accept-terms-of-use": True, "surprise": 1}), 400)
    assert api.get("/management/v1/info").json() == before


def test_projects_lifecycle(api: httpx.Client, tmp_path: Path) -> None:
    created = api.post("/management/v1/project", json={"project-name": "analytics"})
    assert created.status_code == 201, created.text
    project = created.json()["project-id"]
    header = {"x-project-id": project}

    listed = api.get("/management/v1/project-list").json()["projects"]
    assert {"project-id": project, "project-name": "analytics"} in listed
    assert {"project-id": NIL, "project-name": "default"} in listed
    assert api.get("/management/v1/project").json() == {"project-id": NIL, "project-name": "default"}

    assert api.post("/management/v1/project/rename", json={"new-name": "bi"}, headers=header).status_code == 204
    assert api.get("/management/v1/project", headers=header).json() == {"project-id": project, "project-name": "bi"}

    _create_warehouse(api, "w", tmp_path / "w", project)
    _error(api.delete("/management/v1/project", headers=header), 409)

    explicit = str(uuid.uuid4())
    response = api.post("/management/v1/project", json={"project-name": "x", "project-id": explicit})
    assert response.json() == {"project-id": explicit}
    _error(api.post("/management/v1/project", json={"project-name": "y", "project-id": explicit}), 409)
    assert api.delete("/management/v1/project", headers={"x-project-id": explicit}).status_code == 204
    _error(api.get("/management/v1/project", headers={"x-project-id": explicit}), 404)
    _error(api.get("/management/v1/project", headers={"x-project-id": "not-a-uuid"}), 400)
    _error(api.post("/management/v1/project", json={"project-name": ""}), 400)
    _error(api.post("/management/v1/project", json={"name": "wrong field"}), 400)


def test_warehouse_lifecycle(api: httpx.Client, tmp_path: Path) -> None:
    warehouse = _create_warehouse(api, "Sales", tmp_path / "sales")
    got = api.get(f"/management/v1/warehouse/{warehouse}").json()
    assert got["name"] == "Sales"
    assert got["status"] == "active"
    assert got["project-id"] == NIL
    assert got["storage-profile"]["type"] == "file"
    assert got["delete-profile"] == {"type": "hard"}
    assert got["server-side-rebase"] is None  # the server's setting is in force
    assert (tmp_path / "sales").is_dir()  # the access probe created the base directory
    assert list((tmp_path / "sales").iterdir()) == []  # and removed its probe file

    names = [item["name"] for item in api.get("/management/v1/warehouse").json()["warehouses"]]
    assert "Sales" in names
    assert "demo" in names

    # Bad input: 4xx with the envelope, nothing recorded.
    body = {"warehouse-name": "sales", "storage-profile": _file_profile(tmp_path / "other")}
    _error(api.post("/management/v1/warehouse", json=body), 409)
    overlapping = {"warehouse-name": "inner", "storage-profile": _file_profile(tmp_path / "sales" / "inner")}
    _error(api.post("/management/v1/warehouse", json=overlapping), 400)
    _error(api.post("/management/v1/warehouse", json={**body, "warehouse-name": "x", "colour": "red"}), 400)
    bad_type = {"warehouse-name": "x", "storage-profile": {"type": "ftp", "location": "/x"}}
    _error(api.post("/management/v1/warehouse", json=bad_type), 400)
    relative = {"warehouse-name": "x", "storage-profile": {"type": "file", "location": "relative/path"}}
    _error(api.post("/management/v1/warehouse", json=relative), 400)
    bad_delete = {**body, "warehouse-name": "x", "delete-profile": {"type": "soft", "expiration-seconds": -1}}
    _error(api.post("/management/v1/warehouse", json=bad_delete), 400)
    _error(api.get(f"/management/v1/warehouse/{uuid.uuid4()}"), 404)
    assert "x" not in [item["name"] for item in api.get("/management/v1/warehouse").json()["warehouses"]]

    # Rename: the catalog resolves the new name only.
    assert api.post(f"/management/v1/warehouse/{warehouse}/rename", json={"new-name": "Revenue"}).status_code == 204
    assert _config(api, "revenue").json()["defaults"]["prefix"] == warehouse
    _error(_config(api, "Sales"), 404)

    # Deactivate: catalog access refused, data kept; activate: back.
    prefix = f"/catalog/v1/{warehouse}"
    assert api.post(f"{prefix}/namespaces", json={"namespace": ["kept"]}).status_code == 200
    assert api.post(f"/management/v1/warehouse/{warehouse}/deactivate").status_code == 204
    assert _error(_config(api, "Revenue"), 403)["type"] == "ForbiddenException"
    _error(api.get(f"{prefix}/namespaces"), 403)
    statuses = {item["name"]: item["status"] for item in api.get("/management/v1/warehouse").json()["warehouses"]}
    assert statuses["Revenue"] == "inactive"
    inactive_only = api.get("/management/v1/warehouse", params={"warehouseStatus": "inactive"}).json()
    assert [item["name"] for item in inactive_only["warehouses"]] == ["Revenue"]
    assert api.post(f"/management/v1/warehouse/{warehouse}/activate").status_code == 204
    assert api.get(f"{prefix}/namespaces").json()["namespaces"] == [["kept"]]

    # Delete profile and storage updates.
    soft = {"delete-profile": {"type": "soft", "expiration-seconds": 3600}}
    assert api.post(f"/management/v1/warehouse/{warehouse}/delete-profile", json=soft).status_code == 204
    assert api.get(f"/management/v1/warehouse/{warehouse}").json()["delete-profile"] == soft["delete-profile"]
    rebase = api.post(f"/management/v1/warehouse/{warehouse}/server-side-rebase", json={"mode": "opt-in"})
    assert rebase.status_code == 204, rebase.text
    assert api.get(f"/management/v1/warehouse/{warehouse}").json()["server-side-rebase"] == "opt-in"
    _error(api.post(f"/management/v1/warehouse/{warehouse}/server-side-rebase", json={"mode": "sometimes"}), 400)
    moved = {"storage-profile": _file_profile(tmp_path / "elsewhere")}
    _error(api.post(f"/management/v1/warehouse/{warehouse}/storage", json=moved), 400)
    same = {"storage-profile": _file_profile(tmp_path / "sales")}
    assert api.post(f"/management/v1/warehouse/{warehouse}/storage", json=same).status_code == 204

    # Delete: refused while it holds a namespace, forced drops everything with events.
    _error(api.delete(f"/management/v1/warehouse/{warehouse}"), 409)
    assert api.delete(f"/management/v1/warehouse/{warehouse}", params={"force": "true"}).status_code == 204
    _error(api.get(f"/management/v1/warehouse/{warehouse}"), 404)
    _error(_config(api, "Revenue"), 404)


def test_warehouse_names_are_per_project(api: httpx.Client, tmp_path: Path) -> None:
    first = api.post("/management/v1/project", json={"project-name": "first"}).json()["project-id"]
    second = api.post("/management/v1/project", json={"project-name": "second"}).json()["project-id"]
    warehouse = _create_warehouse(api, "shared", tmp_path / "a", first)

    assert _config(api, "shared", first).json()["defaults"]["prefix"] == warehouse
    _error(_config(api, "shared", second), 404)
    _error(_config(api, "shared"), 404)  # the default project does not see it either
    assert _config(api, f"{first}/shared").json()["defaults"]["prefix"] == warehouse
    listed = api.get("/management/v1/warehouse", headers={"x-project-id": second}).json()
    assert listed == {"warehouses": []}

    # The same name in the second project is a different warehouse (locations must not overlap per project).
    other = _create_warehouse(api, "shared", tmp_path / "b", second)
    assert other != warehouse
    assert _config(api, "shared", second).json()["defaults"]["prefix"] == other


def test_management_changes_are_events(api: httpx.Client, catalog: RunningCatalog, tmp_path: Path) -> None:
    warehouse = _create_warehouse(api, "audited", tmp_path / "audited")
    api.post(f"/management/v1/warehouse/{warehouse}/rename", json={"new-name": "audited2"})
    api.post(f"/management/v1/warehouse/{warehouse}/deactivate")
    api.post(f"/management/v1/warehouse/{warehouse}/server-side-rebase", json={"mode": "off"})
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        rows = conn.execute(
            "SELECT type, extensions->>'actor' FROM catalog_events WHERE stream_id = %s ORDER BY global_position",
            (f"warehouse-{warehouse}",),
        ).fetchall()
    assert [row[0] for row in rows] == [
        "io.catalog-es.warehouse.created.v1",
        "io.catalog-es.warehouse.renamed.v1",
        "io.catalog-es.warehouse.deactivated.v1",
        "io.catalog-es.warehouse.server-side-rebase-updated.v1",
    ]
    assert {row[1] for row in rows} == {"anonymous"}


def test_openapi_documents_and_swagger(api: httpx.Client) -> None:
    management = api.get("/api-docs/management/v1/openapi.json").json()
    assert "/management/v1/warehouse" in management["paths"]
    assert "post" in management["paths"]["/management/v1/warehouse/{warehouse_id}/server-side-rebase"]
    assert all(path.startswith("/management/v1") for path in management["paths"])
    catalog_doc = api.get("/api-docs/catalog/v1/openapi.json").json()
    assert "/catalog/v1/config" in catalog_doc["paths"]
    swagger = api.get("/swagger-ui", follow_redirects=True)
    assert swagger.status_code == 200
    assert "swagger" in swagger.text.lower()
