"""Tables through Iceberg 1.10's Java `RESTCatalog`, asserting what Iceberg's own `CatalogTests` assert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog_es.locations import local_path
from tests.e2e.java.jvm import Java, java_error

pytestmark = [pytest.mark.e2e, pytest.mark.java]

FIELDS = [
    {"id": 1, "name": "id", "type": "int", "required": True},
    {"id": 2, "name": "data", "type": "string", "required": False},
]


def test_created_table_loads_with_its_schema_and_is_gone_when_dropped(java: Java, catalog: Any, namespace: Any):
    ident = java.ident(namespace, "t")
    schema = java.schema(FIELDS)

    created = catalog.buildTable(ident, schema).withProperty("owner", "java").create()
    loaded = catalog.loadTable(ident)

    assert loaded.schema().asStruct().equals(schema.asStruct())
    assert loaded.uuid().equals(created.uuid())
    assert str(loaded.properties().get("owner")) == "java"
    assert catalog.tableExists(ident)
    assert java.sorted_names(catalog.listTables(namespace)) == ["t"]
    assert catalog.dropTable(ident)
    assert not catalog.tableExists(ident)
    assert not catalog.dropTable(ident)
    missing = java_error(lambda: catalog.loadTable(ident))
    assert (missing.type_name, missing.message) == ("NoSuchTableException", f"Table does not exist: {namespace}.t")


def test_second_of_two_transactions_on_one_base_fails_with_commit_failed_when_committed_together(
    java: Java, catalog: Any, namespace: Any
):
    ident = java.ident(namespace, "t")
    catalog.buildTable(ident, java.schema(FIELDS)).create()
    first, second = catalog.loadTable(ident).newTransaction(), catalog.loadTable(ident).newTransaction()
    first.updateSchema().deleteColumn("data").commit()  # a new schema, no new field id
    second.updateSchema().renameColumn("data", "renamed").commit()

    def commit(transaction: Any) -> None:
        table_commit = java.iceberg.catalog.TableCommit.create(
            ident, transaction.startMetadata(), transaction.currentMetadata()
        )
        catalog.commitTransaction([table_commit])

    commit(first)
    conflict = java_error(lambda: commit(second))

    assert conflict.type_name == "CommitFailedException"
    assert "Requirement failed: current schema changed: expected id 0 != 1" in conflict.message
    names = [str(field.name()) for field in catalog.loadTable(ident).schema().columns()]
    assert names == ["id"]


def test_stale_schema_update_fails_with_the_reference_message_when_the_schema_changed_concurrently(
    java: Java, catalog: Any, namespace: Any
):
    ident = java.ident(namespace, "t")
    table = catalog.buildTable(ident, java.schema(FIELDS)).withProperty("commit.retry.num-retries", "0").create()
    stale = catalog.loadTable(ident)
    table.updateSchema().deleteColumn("data").commit()

    conflict = java_error(lambda: stale.updateSchema().addColumn("x", java.types().LongType.get()).commit())

    assert conflict.type_name == "CommitFailedException"
    assert conflict.message == "Commit failed: Requirement failed: current schema changed: expected id 0 != 1"


def test_create_transaction_fails_when_another_client_created_the_table_first(java: Java, catalog: Any, namespace: Any):
    ident = java.ident(namespace, "t")
    create = catalog.buildTable(ident, java.schema(FIELDS)).createTransaction()
    catalog.buildTable(ident, java.schema(FIELDS[:1])).create()

    conflict = java_error(create.commitTransaction)

    assert conflict.type_name == "AlreadyExistsException"
    assert conflict.message.startswith("Requirement failed: table already exists"), conflict.message
    assert catalog.loadTable(ident).schema().columns().size() == 1


def test_create_table_fails_with_already_exists_when_the_name_is_taken(java: Java, catalog: Any, namespace: Any):
    ident = java.ident(namespace, "t")
    catalog.buildTable(ident, java.schema(FIELDS)).create()

    again = java_error(lambda: catalog.buildTable(ident, java.schema(FIELDS)).create())

    assert (again.type_name, again.message) == ("AlreadyExistsException", f"Table already exists: {namespace}.t")


def test_create_or_replace_creates_then_replaces_with_a_new_spec_and_sort_order(
    java: Java, catalog: Any, namespace: Any
):
    ident = java.ident(namespace, "t")
    schema = java.schema(FIELDS)
    catalog.buildTable(ident, schema).createOrReplaceTransaction().commitTransaction()
    original = catalog.loadTable(ident)
    assert original.spec().isUnpartitioned()
    spec = java.iceberg.PartitionSpec.builderFor(schema).bucket("id", 16).build()
    order = java.iceberg.SortOrder.builderFor(schema).asc("data").build()

    replace = catalog.buildTable(ident, schema).withPartitionSpec(spec).withSortOrder(order).replaceTransaction()
    replace.commitTransaction()
    replaced = catalog.loadTable(ident)

    assert replaced.uuid().equals(original.uuid())
    assert str(replaced.spec().fields().get(0).transform()) == "bucket[16]"
    assert str(replaced.sortOrder().fields().get(0).transform()) == "identity"
    assert replaced.sortOrder().fields().get(0).sourceId() == 2
    assert replaced.specs().size() == 2
    catalog.buildTable(ident, schema).createOrReplaceTransaction().commitTransaction()
    assert catalog.loadTable(ident).spec().isUnpartitioned()


def test_replace_transaction_fails_with_no_such_table_when_the_table_does_not_exist(
    java: Java, catalog: Any, namespace: Any
):
    ident = java.ident(namespace, "missing")

    missing = java_error(lambda: catalog.buildTable(ident, java.schema(FIELDS)).replaceTransaction())

    assert (missing.type_name, missing.message) == (
        "NoSuchTableException",
        f"Table does not exist: {namespace}.missing",
    )


def test_rename_table_onto_an_existing_table_or_view_fails_with_the_reference_message(
    java: Java, catalog: Any, namespace: Any
):
    schema = java.schema(FIELDS)
    source, other, view = (java.ident(namespace, name) for name in ("a", "b", "v"))
    for ident in (source, other):
        catalog.buildTable(ident, schema).create()
    catalog.buildView(view).withSchema(schema).withDefaultNamespace(namespace).withQuery("spark", "SELECT 1").create()

    onto_table = java_error(lambda: catalog.renameTable(source, other))
    onto_view = java_error(lambda: catalog.renameTable(source, view))

    assert (onto_table.type_name, onto_table.message) == (
        "AlreadyExistsException",
        f"Cannot rename {namespace}.a to {namespace}.b. Table already exists",
    )
    assert (onto_view.type_name, onto_view.message) == (
        "AlreadyExistsException",
        f"Cannot rename {namespace}.a to {namespace}.v. View already exists",
    )
    assert catalog.tableExists(source)


@pytest.mark.parametrize(
    ("namespace_name", "table_name", "renamed"),
    [
        ("sales team", "big orders", "big orders+1"),
        ("a+b", "c%d", "e/f g"),
        ("ümlaut ns", "tab\u00e9 #1", "x?y&z=1"),
    ],
)
def test_names_with_spaces_and_special_characters_survive_create_list_load_rename_and_drop(
    java: Java, catalog: Any, namespace_name: str, table_name: str, renamed: str
):
    namespace = java.namespace(namespace_name)
    catalog.createNamespace(namespace)
    ident, target = java.ident(namespace, table_name), java.ident(namespace, renamed)

    catalog.buildTable(ident, java.schema(FIELDS)).create()
    catalog.renameTable(ident, target)

    assert catalog.namespaceExists(namespace)
    assert catalog.listNamespaces().contains(namespace)
    assert java.sorted_names(catalog.listTables(namespace)) == [renamed]
    assert catalog.loadTable(target).schema().columns().size() == 2
    assert not catalog.tableExists(ident)
    assert catalog.dropTable(target)
    assert catalog.dropNamespace(namespace)


def test_format_v3_table_is_created_and_loaded_when_the_java_client_asks_for_it(
    java: Java, catalog: Any, namespace: Any
):
    ident = java.ident(namespace, "v3")

    catalog.buildTable(ident, java.schema(FIELDS)).withProperty("format-version", "3").create()
    loaded = catalog.loadTable(ident)

    assert loaded.operations().current().formatVersion() == 3


def test_column_defaults_survive_create_through_the_java_client(java: Java, catalog: Any, namespace: Any):
    """#29 item 2: v3 `initial-default` / `write-default` are kept, as Iceberg's `AssignFreshIds` keeps them."""
    fields = [
        {"id": 1, "name": "id", "type": "int", "required": True},
        {"id": 2, "name": "level", "type": "int", "required": False, "initial-default": 3, "write-default": 4},
    ]
    ident = java.ident(namespace, "t")
    catalog.buildTable(ident, java.schema(fields)).withProperty("format-version", "3").create()

    level = catalog.loadTable(ident).schema().findField("level")

    assert (level.initialDefault(), level.writeDefault()) == (3, 4)


def test_load_table_fails_when_the_metadata_file_was_deleted_behind_the_catalog(
    java: Java, catalog: Any, namespace: Any
):
    """#29 item 11: what Iceberg 1.11's kit asserts of `loadTable`, through 1.10.2's client."""
    ident = java.ident(namespace, "t")
    catalog.buildTable(ident, java.schema(FIELDS)).create()
    metadata_file = str(catalog.loadTable(ident).operations().current().metadataFileLocation())
    hidden = Path(local_path(metadata_file))
    hidden.rename(hidden.with_name(hidden.name + ".bak"))
    try:
        missing = java_error(lambda: catalog.loadTable(ident))
    finally:
        hidden.with_name(hidden.name + ".bak").rename(hidden)

    assert missing.message == f"Failed to open input stream for file: {metadata_file}"
    # The server sends 404 NotFoundException; 1.10.2's ErrorHandlers turn every 404 but a namespace's into this.
    assert missing.type_name == "NoSuchTableException"
    assert catalog.loadTable(ident).uuid() is not None
