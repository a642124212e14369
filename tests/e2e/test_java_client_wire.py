"""What Iceberg's Java client (`RESTCatalog`) relies on, spoken raw with httpx: `+` in path segments, metrics on
a staged table, and the error texts and types of Iceberg's reference server (`CatalogHandlers`).

The expected messages are what `CatalogHandlers` over Iceberg 1.10.2's `InMemoryCatalog` answers for the same
request; tests/e2e/java drives the Java client itself.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.e2e.conftest import RestApi, RunningCatalog
from tests.e2e.rest_helpers import Json, assert_error, create_namespace, create_table, load_table, table_url
from tests.e2e.shared_server import module_catalog, module_server, warehouse, warehouse_rest  # noqa: F401 - fixtures
from tests.e2e.test_views import create_view, rename, view_url, view_version

pytestmark = pytest.mark.e2e


def _commit(rest: RestApi, namespace: str, name: str, requirements: list[Json], updates: list[Json] | None = None):
    body = {"requirements": requirements, "updates": updates or [{"action": "set-properties", "updates": {"k": "v"}}]}
    return rest.http.post(table_url(rest, namespace, name), json=body)


# --- `+` in path segments (issue #14, defect 4) ------------------------------------------------------


def test_plus_in_a_path_segment_is_a_space_when_the_java_client_form_encodes_a_name(rest: RestApi) -> None:
    create_namespace(rest, "sales team")
    assert create_table(rest, "sales team", "big orders").status_code == 200
    create_namespace(rest, "c+d")  # a literal plus: the Java client and pyiceberg both send %2B

    namespace = rest.http.get(rest.url("namespaces/sales+team"))
    table = rest.http.get(rest.url("namespaces/sales+team/tables/big+orders"))
    literal_plus = rest.http.get(rest.url("namespaces/c%2Bd"))

    assert namespace.status_code == 200, namespace.text
    assert namespace.json()["namespace"] == ["sales team"]
    assert table.status_code == 200, table.text
    assert table.json()["metadata"] == load_table(rest, "sales team", "big orders")["metadata"]
    assert literal_plus.status_code == 200, literal_plus.text
    assert literal_plus.json()["namespace"] == ["c+d"]


# --- metrics on a staged table (defect 11) -----------------------------------------------------------


def test_report_metrics_returns_204_and_keeps_nothing_when_the_table_is_only_staged(
    rest: RestApi, catalog: RunningCatalog
) -> None:
    create_namespace(rest, "shop")
    staged = create_table(rest, "shop", "ctas", {"stage-create": True})
    assert staged.status_code == 200, staged.text
    report = {"report-type": "commit-report", "table-name": "shop.ctas", "snapshot-id": 1, "sequence-number": 1}

    response = rest.http.post(f"{table_url(rest, 'shop', 'ctas')}/metrics", json=report)

    assert response.status_code == 204, response.text
    assert rest.http.get(table_url(rest, "shop", "ctas")).status_code == 404
    with psycopg.connect(catalog.env["CATALOG_ES__PG_DSN"]) as conn:
        assert conn.execute("SELECT count(*) FROM table_metrics_reports").fetchone() == (0,)


# --- error texts and types (defect 5) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        (
            {"type": "assert-current-schema-id", "current-schema-id": 1},
            "Requirement failed: current schema changed: expected id 1 != 0",
        ),
        (
            {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 5},
            "Requirement failed: last assigned field id changed: expected id 5 != 2",
        ),
        (
            {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 5},
            "Requirement failed: last assigned partition id changed: expected id 5 != 999",
        ),
        (
            {"type": "assert-default-spec-id", "default-spec-id": 3},
            "Requirement failed: default partition spec changed: expected id 3 != 0",
        ),
        (
            {"type": "assert-default-sort-order-id", "default-sort-order-id": 3},
            "Requirement failed: default sort order changed: expected id 3 != 0",
        ),
        ({"type": "assert-create"}, "Requirement failed: table already exists"),
    ],
)
def test_failed_requirement_is_worded_as_the_reference_server_words_it(
    rest: RestApi, requirement: Json, message: str
) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200

    response = _commit(rest, "shop", "t", [requirement])

    assert assert_error(response, 409, "CommitFailedException") == message


def test_failed_uuid_requirement_names_the_tables_uuid_first_when_it_does_not_match(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    table_uuid = create_table(rest, "shop", "t").json()["metadata"]["table-uuid"]
    other = "00000000-0000-0000-0000-000000000000"

    response = _commit(rest, "shop", "t", [{"type": "assert-table-uuid", "uuid": other}])

    expected = f"Requirement failed: UUID does not match: expected {table_uuid} != {other}"
    assert assert_error(response, 409, "CommitFailedException") == expected


def test_name_conflicts_are_worded_with_the_namespace_when_a_table_or_view_holds_the_name(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    assert create_table(rest, "shop", "t").status_code == 200
    assert create_view(rest, "shop", "v").status_code == 200

    conflicts = {
        "table again": (create_table(rest, "shop", "t"), "Table already exists: shop.t"),
        "view again": (create_view(rest, "shop", "v"), "View already exists: shop.v"),
        "view over table": (create_view(rest, "shop", "t"), "Table with same name already exists: shop.t"),
        "table over view": (create_table(rest, "shop", "v"), "View with same name already exists: shop.v"),
        "rename table to view": (
            rename(rest, "tables", ("shop", "t"), ("shop", "v")),
            "Cannot rename shop.t to shop.v. View already exists",
        ),
        "rename view to table": (
            rename(rest, "views", ("shop", "v"), ("shop", "t")),
            "Cannot rename shop.v to shop.t. Table already exists",
        ),
    }

    for case, (response, message) in conflicts.items():
        assert assert_error(response, 409, "AlreadyExistsException") == message, case


def test_rename_onto_an_existing_table_or_view_is_worded_as_the_reference_server_words_it(rest: RestApi) -> None:
    create_namespace(rest, "shop")
    for name in ("a", "b"):
        assert create_table(rest, "shop", name).status_code == 200
        assert create_view(rest, "shop", f"v{name}").status_code == 200

    tables = rename(rest, "tables", ("shop", "a"), ("shop", "b"))
    views = rename(rest, "views", ("shop", "va"), ("shop", "vb"))

    assert assert_error(tables, 409, "AlreadyExistsException") == "Cannot rename shop.a to shop.b. Table already exists"
    assert assert_error(views, 409, "AlreadyExistsException") == "Cannot rename shop.va to shop.vb. View already exists"


def test_view_version_with_two_queries_for_one_dialect_is_an_illegal_argument_when_created_or_replaced(
    rest: RestApi,
) -> None:
    create_namespace(rest, "shop")
    assert create_view(rest, "shop", "v").status_code == 200
    twice = view_version("SELECT 1", version_id=2)
    twice["representations"] = [{"type": "sql", "sql": f"SELECT {i}", "dialect": "spark"} for i in (1, 2)]

    created = create_view(rest, "shop", "v2", {"view-version": twice})
    replaced = rest.http.post(
        view_url(rest, "shop", "v"),
        json={
            "requirements": [],
            "updates": [
                {"action": "add-view-version", "view-version": twice},
                {"action": "set-current-view-version", "view-version-id": -1},
            ],
        },
    )

    expected = "Invalid view version: Cannot add multiple queries for dialect spark"
    assert assert_error(created, 400, "IllegalArgumentException") == expected
    assert assert_error(replaced, 400, "IllegalArgumentException") == expected
    assert rest.http.get(view_url(rest, "shop", "v2")).status_code == 404
