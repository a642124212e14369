"""Failed table requirements worded as Iceberg's reference implementation (`UpdateRequirement`) words them."""

from __future__ import annotations

from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.update import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    TableRequirement,
)

# The id-comparing requirements: what changed, the requirement's field, the metadata's field.
_ID_CHECKS: dict[type[TableRequirement], tuple[str, str, str]] = {
    AssertCurrentSchemaId: ("current schema", "current_schema_id", "current_schema_id"),
    AssertLastAssignedFieldId: ("last assigned field id", "last_assigned_field_id", "last_column_id"),
    AssertLastAssignedPartitionId: ("last assigned partition id", "last_assigned_partition_id", "last_partition_id"),
    AssertDefaultSpecId: ("default partition spec", "default_spec_id", "default_spec_id"),
    AssertDefaultSortOrderId: ("default sort order", "default_sort_order_id", "default_sort_order_id"),
}


def reference_message(requirement: TableRequirement, base: TableMetadata | None, pyiceberg_message: str) -> str:
    """The reference server's text for `requirement` failing on `base`, else pyiceberg's own.

    pyiceberg validates (its rules are the spec's); only the wording differs, and Java engines, the
    Iceberg test suites and users match on the reference text. Without a base (a staged create) the
    reference has no wording of its own, so pyiceberg's is kept.
    """
    if base is None:
        return pyiceberg_message
    if (check := _ID_CHECKS.get(type(requirement))) is not None:
        what, expected, actual = check
        expected_id, actual_id = getattr(requirement, expected), getattr(base, actual)
        return f"Requirement failed: {what} changed: expected id {expected_id} != {actual_id}"
    match requirement:
        case AssertCreate():
            return "Requirement failed: table already exists"
        case AssertTableUUID(uuid=requested_uuid):
            # sic: the reference names the table's uuid as the expected one
            return f"Requirement failed: UUID does not match: expected {base.table_uuid} != {requested_uuid}"
        case AssertRefSnapshotId(ref=name, snapshot_id=int(wanted)) if (ref := base.refs.get(name)) is not None:
            kind = ref.snapshot_ref_type.value
            return f"Requirement failed: {kind} {name} has changed: expected id {wanted} != {ref.snapshot_id}"
    return pyiceberg_message
