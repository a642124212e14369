"""Maintenance policies and table health over the management API, with builtin authorization and pyiceberg."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pyarrow as pa
import pytest

from tests.databases import new_database
from tests.e2e.auth.conftest import CLIENTS, bootstrapped, catalog_server
from tests.e2e.auth.openid_provider import OpenIdProvider
from tests.e2e.auth.test_authorization import SCHEMA, _granted, _id, _management, _pyiceberg, _table_id
from tests.e2e.conftest import RunningCatalog, free_port, stop_catalog
from tests.e2e.rest_helpers import assert_error

pytestmark = pytest.mark.e2e

COMPACTION = "system.data-compaction"
# Issue 22's figure. Each pyiceberg append costs more as snapshots accumulate (about 0.25 s at first, 1 s at 100
# snapshots on a loaded 2-core machine): the dominant cost of this file.
APPENDS = 200


@pytest.fixture(scope="module")
def served(
    pg_admin_dsn: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningCatalog, OpenIdProvider]]:
    """One provider and one builtin-authz server (on its own database) for the module: the tests use their own
    namespaces and tables."""
    with new_database(pg_admin_dsn) as dsn:
        tmp_path = tmp_path_factory.mktemp("maintenance")
        idp = OpenIdProvider(tmp_path, free_port(), CLIENTS)
        idp.start()
        running = bootstrapped(catalog_server(dsn, tmp_path, idp, "builtin"), idp)
        try:
            yield running, idp
        finally:
            stop_catalog(running)
            idp.stop()


def _ok(response: httpx.Response, status: int = 200) -> dict:
    assert response.status_code == status, response.text
    return response.json() if status != 204 else {}


def _compaction(policies: list[dict]) -> list[dict]:
    return [p for p in policies if p["policy-type"] == COMPACTION]


def test_policy_routes_decide_on_the_object_and_refuse_bad_content(served: tuple[RunningCatalog, OpenIdProvider]):
    authz_catalog, idp = served
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("sales")
    admin.create_table("sales.orders", schema=SCHEMA)
    admin.create_table("sales.items", schema=SCHEMA)
    provisioned = httpx.get(  # alice's first call makes her known; nothing is granted to her yet
        f"{authz_catalog.catalog_uri}/v1/config",
        params={"warehouse": "demo"},
        headers={"Authorization": f"Bearer {idp.token('alice')}"},
    )
    assert provisioned.status_code == 404
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    namespace = _id(authz_catalog, "SELECT id FROM namespaces WHERE parts = %s", ["sales"])
    orders, items = _table_id(authz_catalog, "orders"), _table_id(authz_catalog, "items")
    root = f"/warehouse/{warehouse}"
    management, alice = _management(authz_catalog, idp, "admin"), _management(authz_catalog, idp, "alice")

    declared = _ok(management.put(f"{root}/namespace/{namespace}/policy/{COMPACTION}", json={"enable": True}))
    assert declared["inherited-from"] == {"type": "namespace", "id": namespace}
    assert declared["content"]["min-input-files"] == 5
    assert _ok(management.get(f"{root}/namespace/{namespace}/policy/{COMPACTION}")) == declared
    assert_error(management.get(f"{root}/table/{orders}/policy/{COMPACTION}"), 404, "NoSuchPolicyException")
    assert_error(
        management.put(f"{root}/table/{orders}/policy/{COMPACTION}", json={"enable": True, "min-input-files": 0}),
        400,
        "BadRequestException",
    )
    assert_error(management.put(f"{root}/table/{orders}/policy/{COMPACTION}", content=b"{"), 400, "BadRequestException")
    assert_error(
        management.put(f"{root}/table/{orders}/policy/system.vacuum", json={"enable": True}), 400, "BadRequestException"
    )
    assert_error(management.delete(f"{root}/table/{orders}/policy/{COMPACTION}"), 404, "NoSuchPolicyException")
    # A table id of another kind or outside the warehouse answers as a missing table.
    assert_error(management.get(f"{root}/table/{namespace}/policies"), 404, "NoSuchTableException")

    # Hidden answers exactly like missing: first the warehouse, then (once she sees it) the table.
    unknown = "00000000-0000-0000-0000-00000000abcd"
    for path in (f"{root}/table/{orders}/policies", f"{root}/table/{unknown}/policies"):
        assert_error(alice.get(path), 404, "NoSuchWarehouseException")
    _granted(management, f"warehouse/{warehouse}/table/{items}", writes=[{"type": "describe", "user": "oidc~alice"}])
    hidden, missing = alice.get(f"{root}/table/{orders}/health"), alice.get(f"{root}/table/{unknown}/health")
    assert assert_error(hidden, 404, "NoSuchTableException").replace(orders, "?") == assert_error(
        missing, 404, "NoSuchTableException"
    ).replace(unknown, "?")
    assert _ok(alice.get(f"{root}/table/{items}/health"))["snapshot-count"] == 0
    _granted(management, f"warehouse/{warehouse}/table/{orders}", writes=[{"type": "describe", "user": "oidc~alice"}])
    effective = _ok(alice.get(f"{root}/table/{orders}/policies"))["policies"]
    assert [(p["policy-type"], p["inherited-from"]["type"], p["inherited"]) for p in _compaction(effective)] == [
        (COMPACTION, "namespace", True)
    ]
    assert_error(
        alice.put(f"{root}/table/{orders}/policy/{COMPACTION}", json={"enable": False}), 403, "ForbiddenException"
    )

    _granted(management, f"warehouse/{warehouse}/table/{orders}", writes=[{"type": "modify", "user": "oidc~alice"}])
    _ok(alice.put(f"{root}/table/{orders}/policy/{COMPACTION}", json={"enable": False}))
    own = _ok(alice.get(f"{root}/table/{orders}/policies"))["policies"]
    assert [(p["inherited-from"]["id"], p["content"]["enable"], p["inherited"]) for p in _compaction(own)] == [
        (orders, False, False)
    ]
    # She sees the namespace (a table in it is hers) but may not change it.
    assert_error(
        alice.put(f"{root}/namespace/{namespace}/policy/{COMPACTION}", json={"enable": False}),
        403,
        "ForbiddenException",
    )
    _ok(alice.delete(f"{root}/table/{orders}/policy/{COMPACTION}"), 204)
    (restored,) = _compaction(_ok(alice.get(f"{root}/table/{orders}/policies"))["policies"])
    assert restored["inherited-from"]["id"] == namespace


def test_health_counts_small_files_of_pyiceberg_appends_when_a_namespace_policy_applies(
    served: tuple[RunningCatalog, OpenIdProvider],
):
    authz_catalog, idp = served
    admin = _pyiceberg(authz_catalog, idp, "admin")
    admin.create_namespace("lake")
    warehouse = _id(authz_catalog, "SELECT id FROM warehouses")
    namespace = _id(authz_catalog, "SELECT id FROM namespaces WHERE parts = %s", ["lake"])
    management = _management(authz_catalog, idp, "admin")
    root = f"/warehouse/{warehouse}"
    _ok(
        management.put(
            f"{root}/namespace/{namespace}/policy/{COMPACTION}",
            json={"enable": True, "min-input-files": 50, "target-file-size-bytes": 134217728},
        )
    )
    _ok(
        management.put(
            f"{root}/policy/system.snapshot-expiry", json={"enable": True, "trigger-snapshot-count": APPENDS // 2}
        )
    )

    table = admin.create_table("lake.events", schema=SCHEMA)  # created after the policy: it inherits it
    for n in range(APPENDS):
        table.append(pa.table({"id": pa.array([n], type=pa.int64())}))
    table_id = _table_id(authz_catalog, "events")

    health = _ok(management.get(f"{root}/table/{table_id}/health"))
    assert health["data-files"] == APPENDS
    assert health["small-files"] == APPENDS
    assert health["small-file-threshold-bytes"] == 134217728 * 3 // 4
    assert health["snapshot-count"] == APPENDS
    assert health["commits"] == APPENDS
    assert health["commits-since-maintenance"][COMPACTION] == APPENDS
    assert health["records"] == APPENDS
    assert health["last-maintenance"] == {}
    due = {job["policy-type"]: job["trigger"] for job in health["due"]}
    assert due[COMPACTION]["kind"] == "small-files"
    assert due[COMPACTION]["count"] == APPENDS
    assert due["system.snapshot-expiry"] == {"kind": "snapshot-count", "count": APPENDS}
    policies = _ok(management.get(f"{root}/table/{table_id}/policies"))["policies"]
    assert {p["policy-type"]: p["inherited-from"]["type"] for p in policies} == {
        COMPACTION: "namespace",
        "system.snapshot-expiry": "warehouse",
    }
