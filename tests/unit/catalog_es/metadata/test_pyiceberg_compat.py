"""The pyiceberg internals catalog-es relies on, pinned, and the catalog's update rules kept out of pyiceberg."""

from __future__ import annotations

import pyiceberg
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadataV2, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER
from pyiceberg.table.update import AddSchemaUpdate, SetCurrentSchemaUpdate, update_table_metadata
from pyiceberg.types import LongType, NestedField, StringType

from catalog_es.metadata import pyiceberg_compat
from catalog_es.metadata.tables import applied


def _table() -> TableMetadataV2:
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    metadata = new_table_metadata(schema, UNPARTITIONED_PARTITION_SPEC, UNSORTED_SORT_ORDER, "file:///t", {})
    assert isinstance(metadata, TableMetadataV2)
    return metadata


def _second_schema_claiming_id_0() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False)
    )


def test_the_pyiceberg_release_is_one_these_internals_were_checked_against() -> None:
    assert pyiceberg.__version__.startswith(pyiceberg_compat.CHECKED_PYICEBERG_VERSIONS), (
        f"pyiceberg {pyiceberg.__version__}: re-check every name in catalog_es/metadata/pyiceberg_compat.py"
    )


def test_the_catalog_assigns_a_free_schema_id_where_the_client_asked_for_a_taken_one() -> None:
    base = _table()
    updates = [AddSchemaUpdate(schema=_second_schema_claiming_id_0()), SetCurrentSchemaUpdate(schema_id=-1)]

    result = applied(
        base, "file:///t/metadata/00000-a.metadata.json", [u.model_dump(by_alias=True) for u in updates], now_ms=1
    )

    assert [schema.schema_id for schema in result.metadata.schemas] == [0, 1]
    assert result.metadata.current_schema_id == 1


def test_pyiceberg_outside_the_catalog_keeps_its_own_rules() -> None:
    """Importing catalog-es must not change what pyiceberg does in the same process (an `audit export`)."""
    base = _table()

    plain = update_table_metadata(base, (AddSchemaUpdate(schema=_second_schema_claiming_id_0()),))

    # pyiceberg 0.12 keeps the client's id 0 rather than assigning 1 (the catalog's rule above).
    assert [schema.schema_id for schema in plain.schemas] == [0, 0]
