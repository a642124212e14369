"""View protection over HTTP (allow-all authorizer): a protected view refuses DROP until forced or unprotected."""

from __future__ import annotations

import httpx
import psycopg
import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import assert_error, create_namespace
from tests.e2e.test_views import create_view, view_url

pytestmark = pytest.mark.e2e


def _view_id(catalog: RunningCatalog, name: str) -> str:
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        row = conn.execute("SELECT id FROM views WHERE name = %s", (name,)).fetchone()
    assert row is not None
    return str(row[0])


def test_protected_view_refuses_drop_until_forced(catalog: RunningCatalog, rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_view(rest, "shop", "daily").status_code == 200
    view = _view_id(catalog, "daily")
    management = httpx.Client(base_url=f"{catalog.base_url}/management/v1", timeout=30)
    protection = f"/warehouse/{rest.prefix}/view/{view}/protection"

    set_on = management.post(protection, json={"protected": True})
    assert set_on.status_code == 200, set_on.text
    assert set_on.json()["protected"] is True
    assert management.get(protection).json() == set_on.json()
    message = assert_error(rest.http.delete(view_url(rest, "shop", "daily")), 409, "ProtectedException")
    assert message.startswith("View shop.daily is protected from being dropped")
    other = f"/warehouse/00000000-0000-0000-0000-0000000000ff/view/{view}/protection"
    assert_error(management.get(other), 404, "NoSuchViewException")  # not that warehouse's view
    as_table = f"/warehouse/{rest.prefix}/table/{view}/protection"
    assert_error(management.get(as_table), 404, "NoSuchTableException")

    assert rest.http.delete(view_url(rest, "shop", "daily"), params={"force": "true"}).status_code == 204
    assert_error(management.get(protection), 404, "NoSuchViewException")
    assert_error(rest.http.get(view_url(rest, "shop", "daily")), 404, "NoSuchViewException")
