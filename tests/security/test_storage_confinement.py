"""Storage confinement probes (issue #13, items 1 and 2): a real server with OIDC and builtin authorization,
attacked by a server admin's mistakes and by a project admin (alice, project_admin of project B only)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.conftest import RunningCatalog, eventually
from tests.e2e.rest_helpers import SCHEMA, assert_error

pytestmark = pytest.mark.e2e


def _http(catalog: RunningCatalog, idp: OpenIdProvider, client: str, base: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {idp.token(client)}"}
    return httpx.Client(base_url=f"{catalog.base_url}{base}", headers=headers, timeout=30)


class Catalog:
    """The admin's REST view of a file warehouse (the default `demo`, or one at `location`), plus its management
    API."""

    def __init__(
        self, catalog: RunningCatalog, idp: OpenIdProvider, warehouse: str = "demo", location: Path | None = None
    ) -> None:
        self.server, self.idp, self.warehouse = catalog, idp, warehouse
        self.management = _http(catalog, idp, "admin", "/management/v1")
        self.rest = _http(catalog, idp, "admin", "/catalog/v1/")
        config = self.rest.get("config", params={"warehouse": warehouse})
        assert config.status_code == 200, config.text
        self.prefix = config.json()["defaults"]["prefix"]
        self.warehouse_dir = (location or catalog.data_dir / "warehouse" / "demo").resolve()
        self.warehouse_dir.mkdir(parents=True, exist_ok=True)

    def url(self, path: str) -> str:
        return f"{self.prefix}/{path}"

    def table(self, name: str) -> str:
        return self.url(f"namespaces/shop/tables/{name}")

    def create_table(self, name: str) -> dict[str, object]:
        if self.rest.head(self.url("namespaces/shop")).status_code == 404:
            assert self.rest.post(self.url("namespaces"), json={"namespace": ["shop"]}).status_code == 200
        created = self.rest.post(self.url("namespaces/shop/tables"), json={"name": name, "schema": SCHEMA})
        assert created.status_code == 200, created.text
        body: dict[str, object] = created.json()
        return body

    def set_location(self, name: str, location: str) -> httpx.Response:
        update = {"action": "set-location", "location": location}
        return self.rest.post(self.table(name), json={"requirements": [], "updates": [update]})

    def register(self, name: str, metadata_location: str) -> httpx.Response:
        body = {"name": name, "metadata-location": metadata_location}
        return self.rest.post(self.url("namespaces/shop/register"), json=body)


@pytest.fixture
def admin(module_authz_catalog: RunningCatalog, idp: OpenIdProvider, tmp_path: Path) -> Iterator[Catalog]:
    """The module's one server (tests/e2e/auth/conftest.py), on a new file warehouse of this test's own."""
    location = tmp_path / "warehouse"
    name = f"w-{uuid.uuid4().hex[:12]}"
    with _http(module_authz_catalog, idp, "admin", "/management/v1") as management:
        body = {"warehouse-name": name, "storage-profile": {"type": "file", "location": str(location)}}
        created = management.post("/warehouse", json=body)
    assert created.status_code == 201, created.text
    catalog = Catalog(module_authz_catalog, idp, name, location)
    yield catalog
    catalog.rest.close()
    catalog.management.close()


@pytest.fixture
def project_b(admin: Catalog) -> str:
    """Project B, whose project admin is alice (and nothing else)."""
    created = admin.management.post("/project", json={"project-name": "b"})
    assert created.status_code == 201, created.text
    project: str = created.json()["project-id"]
    with _http(admin.server, admin.idp, "alice", "/catalog/v1/") as alice:  # alice becomes a known user
        alice.get("config", params={"warehouse": admin.warehouse})
    granted = admin.management.post(
        "/permissions/project/assignments",
        json={"writes": [{"type": "project_admin", "user": "oidc~alice"}]},
        headers={"x-project-id": project},
    )
    assert granted.status_code == 204, granted.text
    return project


def _files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*") if path.is_file())


def _foreign_directory(admin: Catalog) -> Path:
    """A non-empty directory inside the warehouse that belongs to no table (someone else's files)."""
    foreign = admin.warehouse_dir / "foreign"
    foreign.mkdir(parents=True)
    (foreign / "precious.txt").write_text("not the catalog's")
    return foreign


def test_file_warehouse_is_refused_when_location_is_etc(admin: Catalog) -> None:
    body = {"warehouse-name": "etc", "storage-profile": {"type": "file", "location": "/etc"}}
    response = admin.management.post("/warehouse", json=body)
    assert "outside the server's file storage roots" in assert_error(response, 400, "BadRequestException")


def test_file_warehouse_is_refused_when_location_is_the_server_data_dir(admin: Catalog) -> None:
    data_dir = admin.server.data_dir.resolve()
    for name, location in [("data", data_dir), ("pg", data_dir / "pg"), ("key", data_dir / "secrets.key")]:
        body = {"warehouse-name": name, "storage-profile": {"type": "file", "location": str(location)}}
        response = admin.management.post("/warehouse", json=body)
        assert "server's own data directory" in assert_error(response, 400, "BadRequestException")


def test_file_warehouse_is_refused_when_a_project_admin_creates_it(
    admin: Catalog, project_b: str, tmp_path: Path
) -> None:
    body = {"warehouse-name": "mine", "storage-profile": {"type": "file", "location": str(tmp_path / "b")}}
    with _http(admin.server, admin.idp, "alice", "/management/v1") as alice:
        response = alice.post("/warehouse", json=body, headers={"x-project-id": project_b})
    assert "server admin or operator" in assert_error(response, 403, "ForbiddenException")
    assert not (tmp_path / "b").exists()  # not even the access probe ran


def test_set_location_is_refused_when_target_is_not_empty_and_nothing_is_written(admin: Catalog) -> None:
    admin.create_table("t")
    foreign = _foreign_directory(admin)
    response = admin.set_location("t", foreign.as_uri())
    assert "not empty" in assert_error(response, 400, "BadRequestException")
    assert _files(foreign) == [foreign / "precious.txt"]
    assert not (foreign / "metadata").exists()


def test_set_location_is_refused_when_target_is_outside_the_warehouse_and_nothing_is_written(
    admin: Catalog, tmp_path: Path
) -> None:
    admin.create_table("t")
    outside = tmp_path / "outside"
    response = admin.set_location("t", outside.as_uri())
    assert_error(response, 400, "BadRequestException")
    assert not outside.exists()


def test_set_location_is_refused_before_any_io_when_scheme_is_not_the_warehouse_s3(admin: Catalog) -> None:
    """The SSRF root cause: a file warehouse must not build an S3 FileIO for a client's location."""
    admin.create_table("t")
    response = admin.set_location("t", "s3://some-bucket/elsewhere")
    message = assert_error(response, 400, "BadRequestException")
    assert "not a sub-location of the warehouse" in message  # refused by the rule, not by a failed S3 write


def test_purge_deletes_nothing_foreign_when_a_move_into_a_foreign_directory_was_refused(admin: Catalog) -> None:
    created = admin.create_table("t")
    own = Path(str(created["metadata"]["location"]).removeprefix("file://"))  # type: ignore[index]
    foreign = _foreign_directory(admin)
    admin.set_location("t", foreign.as_uri())
    assert admin.rest.delete(admin.table("t"), params={"purgeRequested": "true"}).status_code == 204
    assert eventually(lambda: not own.exists())  # the task worker purges after the drop
    assert _files(foreign) == [foreign / "precious.txt"]


def test_purge_keeps_what_its_metadata_does_not_reference_when_a_table_was_registered(admin: Catalog) -> None:
    """A registered table's location was not empty when claimed: purge deletes its referenced files only."""
    created = admin.create_table("t")
    metadata_location = str(created["metadata-location"])
    assert admin.rest.delete(admin.table("t")).status_code == 204  # dropped, files kept
    own = Path(metadata_location.removeprefix("file://")).parent.parent
    (own / "notes.txt").write_text("someone else's")
    assert admin.register("again", metadata_location).status_code == 200
    assert admin.rest.delete(admin.table("again"), params={"purgeRequested": "true"}).status_code == 204
    assert eventually(lambda: _files(own) == [own / "notes.txt"])  # the task worker purges after the drop


def test_warehouse_is_refused_when_it_overlaps_a_warehouse_of_another_project(admin: Catalog, project_b: str) -> None:
    inside_demo = admin.warehouse_dir / "inside"
    body = {"warehouse-name": "overlap", "storage-profile": {"type": "file", "location": str(inside_demo)}}
    response = admin.management.post("/warehouse", json=body, headers={"x-project-id": project_b})
    assert "overlaps" in assert_error(response, 400, "BadRequestException")
    assert not inside_demo.exists()  # the access probe never ran


def test_register_is_refused_before_reading_when_the_file_is_outside_the_warehouse(
    admin: Catalog, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"password": "hunter2"}))
    link = admin.warehouse_dir / "link.metadata.json"
    link.symlink_to(secret)  # inside the warehouse by name, outside once resolved
    admin.rest.post(admin.url("namespaces"), json={"namespace": ["shop"]})
    for location in ["file:///etc/passwd", link.as_uri()]:
        message = assert_error(admin.register("stolen", location), 400, "BadRequestException")
        assert "hunter2" not in message
        assert "root:" not in message
    assert "leads out of the warehouse" in assert_error(
        admin.register("stolen", link.as_uri()), 400, "BadRequestException"
    )


def test_register_answers_400_when_the_json_is_not_table_metadata(admin: Catalog) -> None:
    admin.rest.post(admin.url("namespaces"), json={"namespace": ["shop"]})
    for name, content in [("list", [1, 2]), ("object", {"password": "hunter2"})]:
        path = admin.warehouse_dir / f"{name}.metadata.json"
        path.write_text(json.dumps(content))
        message = assert_error(admin.register(name, path.as_uri()), 400, "BadRequestException")
        assert "hunter2" not in message
    assert admin.rest.get(admin.url(f"namespaces/shop/tables/{quote('list')}")).status_code == 404
