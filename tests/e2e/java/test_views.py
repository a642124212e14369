"""Views through Iceberg 1.10's Java `RESTCatalog`, asserting what Iceberg's own `ViewCatalogTests` assert."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.java.jvm import Java, java_error

pytestmark = [pytest.mark.e2e, pytest.mark.java]

FIELDS = [{"id": 1, "name": "id", "type": "int", "required": True}]


def _view(java: Java, catalog: Any, namespace: Any, name: str) -> Any:
    return (
        catalog.buildView(java.ident(namespace, name)).withSchema(java.schema(FIELDS)).withDefaultNamespace(namespace)
    )


def _queries(view: Any) -> dict[str, str]:
    return {str(r.dialect()): str(r.sql()) for r in view.currentVersion().representations()}


def test_view_is_created_replaced_with_new_dialects_and_dropped(java: Java, catalog: Any, namespace: Any):
    ident = java.ident(namespace, "v")
    created = _view(java, catalog, namespace, "v").withQuery("spark", "SELECT 1 AS id").withProperty("k", "1").create()

    replaced = (
        _view(java, catalog, namespace, "v")
        .withQuery("trino", "SELECT 2 AS id")
        .withQuery("spark", "SELECT 2 AS id")
        .createOrReplace()
    )
    loaded = catalog.loadView(ident)

    assert created.uuid().equals(loaded.uuid())
    assert _queries(loaded) == {"spark": "SELECT 2 AS id", "trino": "SELECT 2 AS id"}
    assert replaced.currentVersion().versionId() == 2
    assert loaded.history().size() == 2
    assert java.sorted_names(catalog.listViews(namespace)) == ["v"]
    assert catalog.viewExists(ident)
    assert catalog.dropView(ident)
    assert not catalog.viewExists(ident)
    missing = java_error(lambda: catalog.loadView(ident))
    assert (missing.type_name, missing.message) == ("NoSuchViewException", f"View does not exist: {namespace}.v")


def test_create_view_fails_with_already_exists_when_a_view_or_table_holds_the_name(
    java: Java, catalog: Any, namespace: Any
):
    _view(java, catalog, namespace, "v").withQuery("spark", "SELECT 1 AS id").create()
    catalog.buildTable(java.ident(namespace, "t"), java.schema(FIELDS)).create()

    view_again = java_error(lambda: _view(java, catalog, namespace, "v").withQuery("spark", "SELECT 1").create())
    over_table = java_error(lambda: _view(java, catalog, namespace, "t").withQuery("spark", "SELECT 1").create())
    table_over_view = java_error(lambda: catalog.buildTable(java.ident(namespace, "v"), java.schema(FIELDS)).create())

    assert (view_again.type_name, view_again.message) == (
        "AlreadyExistsException",
        f"View already exists: {namespace}.v",
    )
    assert (over_table.type_name, over_table.message) == (
        "AlreadyExistsException",
        f"Table with same name already exists: {namespace}.t",
    )
    assert (table_over_view.type_name, table_over_view.message) == (
        "AlreadyExistsException",
        f"View with same name already exists: {namespace}.v",
    )


def test_view_version_with_two_queries_for_one_dialect_is_refused_with_illegal_argument(
    java: Java, catalog: Any, namespace: Any
):
    builder = _view(java, catalog, namespace, "v").withQuery("trino", "SELECT 1 AS id")

    refused = java_error(lambda: builder.withQuery("trino", "SELECT 2 AS id").create())

    assert refused.type_name == "IllegalArgumentException"
    assert "Cannot add multiple queries for dialect trino" in refused.message
    assert not catalog.viewExists(java.ident(namespace, "v"))


def test_view_is_renamed_and_rename_onto_a_taken_name_fails_with_the_reference_message(
    java: Java, catalog: Any, namespace: Any
):
    for name in ("a", "b"):
        _view(java, catalog, namespace, name).withQuery("spark", "SELECT 1 AS id").create()
    catalog.buildTable(java.ident(namespace, "t"), java.schema(FIELDS)).create()
    source, renamed = java.ident(namespace, "a"), java.ident(namespace, "a renamed")

    catalog.renameView(source, renamed)
    onto_view = java_error(lambda: catalog.renameView(renamed, java.ident(namespace, "b")))
    onto_table = java_error(lambda: catalog.renameView(renamed, java.ident(namespace, "t")))

    assert java.sorted_names(catalog.listViews(namespace)) == ["a renamed", "b"]
    assert (onto_view.type_name, onto_view.message) == (
        "AlreadyExistsException",
        f"Cannot rename {namespace}.a renamed to {namespace}.b. View already exists",
    )
    assert (onto_table.type_name, onto_table.message) == (
        "AlreadyExistsException",
        f"Cannot rename {namespace}.a renamed to {namespace}.t. Table already exists",
    )


def test_view_location_comes_back_as_the_java_client_spelled_it(
    java: Java, catalog: Any, namespace: Any, java_server: Any
):
    """#29 item 12: Iceberg's kit compares the location it sent (`file:/x`) with the view's."""
    table = catalog.buildTable(java.ident(namespace, "probe"), java.schema(FIELDS)).create()
    location = "file:" + str(table.location()).removeprefix("file:").removeprefix("//") + "_view"

    view = _view(java, catalog, namespace, "v").withQuery("spark", "SELECT 1 AS id").withLocation(location).create()

    assert str(view.location()) == location
    assert str(catalog.loadView(java.ident(namespace, "v")).location()) == location
