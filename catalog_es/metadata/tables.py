"""Pure Iceberg table-metadata decisions, made with pyiceberg's own requirement and update logic."""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple, TypeVar

import pydantic
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.exceptions import ValidationError as IcebergValidationError
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import TableProperties
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata, TableMetadataUtil, new_table_metadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.table.update import TableRequirement, TableUpdate

from catalog_es.errors import (
    BadRequestError,
    CommitFailedError,
    ImmutablePropertyModificationError,
    ImmutablePropertyRemovalError,
)
from catalog_es.events import Json
from catalog_es.locations import is_strictly_inside
from catalog_es.metadata.encryption_keys import (
    ENCRYPTION_KEY_RULES,
    KEY_ID_PROPERTY,
    AnyTableUpdate,
    KeyedTableMetadataV3,
)
from catalog_es.metadata.field_defaults import with_field_defaults
from catalog_es.metadata.ids import ID_RULES
from catalog_es.metadata.pyiceberg_compat import (
    UpdateRules,
    empty_table_metadata,
    metadata_log_appended,
    metadata_version,
)
from catalog_es.metadata.ref_clock import REF_CLOCK_RULES, ClockedUpdateContext
from catalog_es.metadata.requirement_failures import reference_message
from catalog_es.metadata.row_lineage import ROW_LINEAGE_RULES, next_row_id_of, with_next_row_id
from catalog_es.metadata.snapshot_index import indexed
from catalog_es.metadata.variant_type import with_variant_types

_REQUIREMENTS = pydantic.TypeAdapter(list[TableRequirement])
_UPDATES = pydantic.TypeAdapter(list[AnyTableUpdate])
_FIRST_PARTITION_FIELD_ID = 1000
# What Iceberg Java's catalogs give a new table unless the client chooses (`TableMetadata.newTableMetadata`
# adds `write.parquet.compression-codec=zstd`): Java writers fall back to gzip on a table without it.
_NEW_TABLE_PROPERTIES = {TableProperties.PARQUET_COMPRESSION: "zstd"}
_T = TypeVar("_T")
# The catalog's rules where it decides differently from pyiceberg 0.12 (or pyiceberg lacks the update).
_UPDATE_RULES = UpdateRules({**ID_RULES, **ROW_LINEAGE_RULES, **ENCRYPTION_KEY_RULES, **REF_CLOCK_RULES})


def _parse(adapter: pydantic.TypeAdapter[_T], value: Any, what: str) -> _T:
    try:
        return adapter.validate_python(value)
    except pydantic.ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BadRequestError(f"Invalid {what} at {where}: {first['msg']}") from None
    except (TypeError, ValueError) as exc:  # raised by pyiceberg's own validators
        raise BadRequestError(f"Invalid {what}: {exc}") from None


def metadata_to_json(metadata: TableMetadata) -> Json:
    """The metadata as written to the metadata file.

    Not `model_dump_json`: pyiceberg 0.12 refuses it for format version 3, while the catalog only
    needs the document (engines write v3 data themselves).
    """
    document: Json = metadata.model_dump(mode="json")
    return document


def parse_metadata(document: Json) -> TableMetadata:
    """The document's model, one that finds snapshots by id in a dict (`snapshot_index`).

    Raises: BadRequestError when the document is not valid table metadata.
    """
    document = _with_variant_schemas(document)
    try:
        if document.get("format-version") == 3:
            return indexed(KeyedTableMetadataV3.model_validate({**document, "next-row-id": next_row_id_of(document)}))
        return indexed(TableMetadataUtil.parse_obj(document))
    except (pydantic.ValidationError, TypeError, ValueError, IcebergValidationError) as exc:
        raise BadRequestError(f"Invalid table metadata: {exc}") from None


def _with_variant_schemas(document: Json) -> Json:
    """The metadata document with `variant` types that pyiceberg can validate (see `variant_type`)."""
    if not isinstance(document.get("schemas"), list):
        return document
    return {**document, "schemas": [with_variant_types(schema) for schema in document["schemas"]]}


def _with_variant_updates(updates: list[Json]) -> list[Json]:
    return [
        {**update, "schema": with_variant_types(update["schema"])}
        if isinstance(update, dict) and update.get("action") == "add-schema" and "schema" in update
        else update
        for update in updates
    ]


def new_metadata(
    *,
    schema: Json,
    partition_spec: Json | None,
    write_order: Json | None,
    location: str,
    properties: dict[str, str],
    table_uuid: uuid.UUID,
    last_updated_ms: int,
) -> TableMetadata:
    """First metadata of a new table, with fresh field, spec and order ids as the spec requires.

    Raises:
        BadRequestError: the schema, spec or order is not valid.
    """
    spec_json = dict(partition_spec) if partition_spec else None
    if spec_json is not None:
        # pyiceberg's PartitionField requires `field-id`, which the REST spec makes optional.
        spec_json["fields"] = [
            {"field-id": _FIRST_PARTITION_FIELD_ID + i, **field} for i, field in enumerate(spec_json.get("fields", []))
        ]
        spec_json.setdefault("spec-id", 0)
    try:
        parsed_schema = Schema.model_validate(with_variant_types(schema))
        spec = PartitionSpec.model_validate(spec_json) if spec_json else UNPARTITIONED_PARTITION_SPEC
        order = SortOrder.model_validate(write_order) if write_order else UNSORTED_SORT_ORDER
        initial_properties = {**_NEW_TABLE_PROPERTIES, **properties}
        metadata = new_table_metadata(parsed_schema, spec, order, location, initial_properties, table_uuid=table_uuid)
        fresh_schema = with_field_defaults(metadata.schemas[0], parsed_schema)
        metadata = metadata.model_copy(update={"schemas": [fresh_schema]})
    except (pydantic.ValidationError, TypeError, ValueError) as exc:
        raise BadRequestError(f"Invalid table definition: {exc}") from None
    return with_next_row_id(metadata).model_copy(update={"last_updated_ms": last_updated_ms})


def commit(
    base: TableMetadata | None,
    base_location: str | None,
    requirements: list[Json],
    updates: list[Json],
    *,
    now_ms: int,
) -> TableMetadata:
    """`decide_commit`'s metadata.

    Raises:
        CommitFailedError: a requirement does not hold (spec: 409, the client refreshes and retries).
        BadRequestError: an update is unknown or cannot be applied.
    """
    return decide_commit(base, base_location, requirements, updates, now_ms=now_ms).metadata


def decide_commit(
    base: TableMetadata | None,
    base_location: str | None,
    requirements: list[Json],
    updates: list[Json],
    *,
    now_ms: int,
) -> AppliedUpdates:
    """Validate the requirements against `base` (None: the table does not exist) and apply the updates.

    `now_ms` stamps `last-updated-ms` when no update set it (the clock is injected, as for views).

    Raises:
        CommitFailedError: a requirement does not hold (spec: 409, the client refreshes and retries).
        BadRequestError: an update is unknown or cannot be applied.
    """
    parsed_requirements = _parse(_REQUIREMENTS, requirements, "requirements")
    parsed_updates = _parse(_UPDATES, _with_variant_updates(updates), "updates")
    for requirement in parsed_requirements:
        try:
            requirement.validate(base)
        except CommitFailedException as exc:
            raise CommitFailedError(reference_message(requirement, base, str(exc))) from None
    try:
        if base is None:  # built up from pyiceberg's empty v1 metadata, then fully validated
            built = _applied(empty_table_metadata(), parsed_updates, None, now_ms)  # type: ignore[arg-type]
            result = AppliedUpdates(parse_metadata(metadata_to_json(built.metadata)), built.assigned_ids)
        else:
            result = _applied(base, parsed_updates, base_location, now_ms)  # type: ignore[arg-type] # encryption-key updates are in _UPDATE_RULES
        updated = result.metadata
        for schema in updated.schemas:  # e.g. a v3 type in a v2 table, or a v3 table downgraded
            schema.check_format_version_compatibility(updated.format_version)
    except (pydantic.ValidationError, TypeError, ValueError) as exc:
        raise BadRequestError(f"Cannot apply updates: {exc}") from None
    _check_immutable_properties(base, updated)
    return result


def applied(base: TableMetadata, base_location: str, updates: list[Json], *, now_ms: int) -> AppliedUpdates:
    """Apply an existing table's updates exactly as `commit` did (requirements are not checked again).

    Replay rebuilds a commit's document with it from the previous document and the event: the result depends only
    on `base`, `base_location`, `updates` and `now_ms`, never on the wall clock.

    Raises:
        BadRequestError: an update is unknown or cannot be applied.
    """
    parsed_updates = _parse(_UPDATES, _with_variant_updates(updates), "updates")
    try:
        return _applied(base, parsed_updates, base_location, now_ms)  # type: ignore[arg-type] # encryption-key updates are in _UPDATE_RULES
    except (pydantic.ValidationError, TypeError, ValueError) as exc:
        raise BadRequestError(f"Cannot apply updates: {exc}") from None


class AppliedUpdates(NamedTuple):
    """The metadata a commit produced and the ids the catalog chose in it (see `ids`)."""

    metadata: TableMetadata
    assigned_ids: dict[str, int]


def _check_immutable_properties(base: TableMetadata | None, updated: TableMetadata) -> None:
    """A table's `encryption.key-id`, once set, stays (its files are encrypted with that key).

    Raises: ImmutablePropertyRemovalError, ImmutablePropertyModificationError (Lakekeeper's types and texts).
    """
    key_id = base.properties.get(KEY_ID_PROPERTY) if base is not None else None
    if key_id is None:
        return
    new_key_id = updated.properties.get(KEY_ID_PROPERTY)
    if new_key_id is None:
        raise ImmutablePropertyRemovalError(f"Cannot remove immutable property '{KEY_ID_PROPERTY}'")
    if new_key_id != key_id:
        raise ImmutablePropertyModificationError(f"Cannot modify immutable property '{KEY_ID_PROPERTY}'")


def _applied(base: TableMetadata, updates: list[TableUpdate], base_location: str | None, now_ms: int) -> AppliedUpdates:
    """pyiceberg's `update_table_metadata` for an existing table, without its closing deep copy.

    Each update is applied by pyiceberg's own function, and the metadata log and timestamp are kept
    as it keeps them; the deep copy (nine tenths of a commit's update time on a table with some
    history) protects against mutation, and metadata objects are never mutated here. pyiceberg reads the
    wall clock for the timestamp; the injected `now_ms` is used instead (also where an update reads it,
    see `ref_clock`).
    """
    context = ClockedUpdateContext(now_ms)
    updated = base
    for update in updates:
        updated = _UPDATE_RULES.apply(update, updated, context)
    if context.has_changes():
        if base_location:
            updated = metadata_log_appended(updated, base_location, base.last_updated_ms)
        if base.last_updated_ms == updated.last_updated_ms:
            updated = updated.model_copy(update={"last_updated_ms": now_ms})
    updated.spec().check_compatible(updated.schema())
    updated.sort_order().check_compatible(updated.schema())
    return AppliedUpdates(updated, context.assigned_ids())


def next_metadata_location(metadata: TableMetadata, previous_location: str | None) -> str:
    """`<location>/metadata/<version>-<uuid>.metadata.json`, numbered after the previous file."""
    version = metadata_version(previous_location) + 1 if previous_location else 0
    provider = load_location_provider(metadata.location, metadata.properties)
    return provider.new_table_metadata_file_location(version)


def table_directories(metadata: TableMetadata) -> list[str]:
    """The table's metadata and data directories (pyiceberg's layout), those inside its location only."""
    provider = load_location_provider(metadata.location, metadata.properties)
    candidates = (provider.metadata_path, provider.data_path)
    return [path for path in candidates if is_strictly_inside(path, metadata.location)]


def only_referenced_snapshots(document: Json) -> Json:
    """The metadata with only the snapshots some ref points at (`snapshots=refs`)."""
    referenced = {ref["snapshot-id"] for ref in document.get("refs", {}).values()}
    if "current-snapshot-id" in document and document["current-snapshot-id"] is not None:
        referenced.add(document["current-snapshot-id"])
    snapshots = [s for s in document.get("snapshots", []) if s["snapshot-id"] in referenced]
    return {**document, "snapshots": snapshots}
