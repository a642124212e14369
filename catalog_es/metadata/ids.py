"""Schema, partition-spec and sort-order ids chosen by the catalog, as Iceberg Java's `TableMetadata.Builder` does.

A client's `add-schema` / `add-spec` / `add-sort-order` carries the id it expects, but a concurrent
replace may have taken that id meanwhile. The reference rule: an equal existing one is reused, else
the next free id is assigned; a later `-1` ("the last added") means the id actually used. pyiceberg
0.12 keeps the client's id (and refuses a clash), so these registrations pick the id, then let
pyiceberg's own functions add the object and set the default.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from pyiceberg.partitioning import PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER_ID, SortOrder
from pyiceberg.table.update import (
    AddPartitionSpecUpdate,
    AddSchemaUpdate,
    AddSortOrderUpdate,
    SetCurrentSchemaUpdate,
    SetDefaultSortOrderUpdate,
    SetDefaultSpecUpdate,
)

from catalog_es.metadata.pyiceberg_compat import UpdateContext, UpdateRule, pyiceberg_rule

_LAST_ADDED = -1
_FIRST_SORT_ORDER_ID = 1  # 0 is the unsorted order

# The ids assigned so far in one commit, by kind; a commit's context lives only while it is applied.
_assigned: WeakKeyDictionary[UpdateContext, dict[str, int]] = WeakKeyDictionary()

_pyiceberg = {
    kind: pyiceberg_rule(kind)
    for kind in (
        AddSchemaUpdate,
        AddPartitionSpecUpdate,
        AddSortOrderUpdate,
        SetCurrentSchemaUpdate,
        SetDefaultSpecUpdate,
        SetDefaultSortOrderUpdate,
    )
}


def _remember(context: UpdateContext, kind: str, assigned_id: int) -> None:
    _assigned.setdefault(context, {})[kind] = assigned_id


def assigned_ids(context: UpdateContext) -> dict[str, int]:
    """The ids chosen so far in the commit applied under `context`, by kind (`schema`, `spec`, `sort-order`)."""
    return dict(_assigned.get(context, {}))


def _last_added(context: UpdateContext, kind: str, requested: int) -> int:
    """The id a `-1` stands for; `requested` itself when nothing was added (pyiceberg then refuses it)."""
    if requested != _LAST_ADDED:
        return requested
    return _assigned.get(context, {}).get(kind, requested)


def _next_id(taken: list[int], first: int) -> int:
    return max([first - 1, *taken]) + 1


def _schema_id(base: TableMetadata, schema: Schema) -> tuple[int, bool]:
    """(id, whether a schema equal but for its id exists under it)."""
    for existing in base.schemas:
        if existing == schema:  # pyiceberg's equality: fields and identifier fields, not the id
            return existing.schema_id, True
    if not base.schemas:
        return schema.schema_id, False
    return _next_id([existing.schema_id for existing in base.schemas], 0), False


def _spec_id(base: TableMetadata, spec: PartitionSpec) -> tuple[int, bool]:
    for existing in base.partition_specs:
        if spec.compatible_with(existing):  # same source ids, transforms and names (Java `compatibleWith`)
            return existing.spec_id, True
    return _next_id([existing.spec_id for existing in base.partition_specs], 0), False


def _order_id(base: TableMetadata, order: SortOrder) -> tuple[int, bool]:
    if order.is_unsorted:
        exists = any(existing.order_id == UNSORTED_SORT_ORDER_ID for existing in base.sort_orders)
        return UNSORTED_SORT_ORDER_ID, exists
    for existing in base.sort_orders:
        if existing.fields == order.fields:
            return existing.order_id, True
    return _next_id([existing.order_id for existing in base.sort_orders], _FIRST_SORT_ORDER_ID), False


def add_schema(update: AddSchemaUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    schema_id, exists = _schema_id(base, update.schema_)
    _remember(context, "schema", schema_id)
    if exists:
        return base
    schema = update.schema_.model_copy(update={"schema_id": schema_id})
    return _pyiceberg[AddSchemaUpdate](update.model_copy(update={"schema_": schema}), base, context)


def add_spec(update: AddPartitionSpecUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    spec_id, exists = _spec_id(base, update.spec)
    _remember(context, "spec", spec_id)
    if exists:
        return base
    spec = PartitionSpec(*update.spec.fields, spec_id=spec_id)
    return _pyiceberg[AddPartitionSpecUpdate](update.model_copy(update={"spec": spec}), base, context)


def add_sort_order(update: AddSortOrderUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    order_id, exists = _order_id(base, update.sort_order)
    _remember(context, "sort-order", order_id)
    if exists:
        return base
    order = update.sort_order.model_copy(update={"order_id": order_id})
    return _pyiceberg[AddSortOrderUpdate](update.model_copy(update={"sort_order": order}), base, context)


def set_current_schema(update: SetCurrentSchemaUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    resolved = update.model_copy(update={"schema_id": _last_added(context, "schema", update.schema_id)})
    return _pyiceberg[SetCurrentSchemaUpdate](resolved, base, context)


def set_default_spec(update: SetDefaultSpecUpdate, base: TableMetadata, context: UpdateContext) -> TableMetadata:
    resolved = update.model_copy(update={"spec_id": _last_added(context, "spec", update.spec_id)})
    return _pyiceberg[SetDefaultSpecUpdate](resolved, base, context)


def set_default_sort_order(
    update: SetDefaultSortOrderUpdate, base: TableMetadata, context: UpdateContext
) -> TableMetadata:
    resolved = update.model_copy(update={"sort_order_id": _last_added(context, "sort-order", update.sort_order_id)})
    return _pyiceberg[SetDefaultSortOrderUpdate](resolved, base, context)


ID_RULES: dict[type, UpdateRule] = {
    AddSchemaUpdate: add_schema,
    AddPartitionSpecUpdate: add_spec,
    AddSortOrderUpdate: add_sort_order,
    SetCurrentSchemaUpdate: set_current_schema,
    SetDefaultSpecUpdate: set_default_spec,
    SetDefaultSortOrderUpdate: set_default_sort_order,
}
