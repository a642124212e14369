"""Storage layouts (Lakekeeper's `storage-layout`): where new namespaces and tables go under the warehouse."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json


class _Layout(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """Base of every layout: tagged by `type`, unknown fields refused."""


class DefaultLayout(_Layout, frozen=True, kw_only=True, tag="default"):
    """`<base>/<namespace uuid>/<table uuid>`: catalog-es's layout since before layouts were configurable."""


class ParentNamespaceAndTable(_Layout, frozen=True, kw_only=True, tag="parent-namespace-and-table"):
    """One directory for the direct parent namespace, one for the table."""

    namespace: str = "{uuid}"
    table: str = "{uuid}"


class FullHierarchy(_Layout, frozen=True, kw_only=True, tag="full-hierarchy"):
    """One directory per namespace level, one for the table."""

    namespace: str = "{uuid}"
    table: str = "{uuid}"


class TableOnly(_Layout, frozen=True, kw_only=True, tag="table-only"):
    """Tables directly under the warehouse base; the template must hold `{uuid}` so two names cannot collide."""

    table: str = "{uuid}"


StorageLayout = DefaultLayout | ParentNamespaceAndTable | FullHierarchy | TableOnly


def decode_layout(document: Json) -> Json:
    """The layout as stored: validated, defaults filled in.

    Raises:
        BadRequestError: an unknown `type` or field, an empty template or one with '/' (a template names one
            directory), a `table-only` table template without `{uuid}`.
    """
    try:
        layout = msgspec.convert(document, StorageLayout)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid storage-layout: {exc}") from None
    templates = {"table": getattr(layout, "table", "{uuid}"), "namespace": getattr(layout, "namespace", "{uuid}")}
    for kind, template in templates.items():
        if not template.strip():
            raise BadRequestError(f"Invalid storage-layout: the {kind} template must not be empty")
        if "/" in template or "\\" in template or template in (".", ".."):
            raise BadRequestError(f"Invalid storage-layout: the {kind} template {template!r} must name one directory")
    if isinstance(layout, TableOnly) and "{uuid}" not in layout.table:
        raise BadRequestError("Invalid storage-layout: a table-only layout's table template must contain {uuid}")
    encoded: Json = msgspec.to_builtins(layout)
    return encoded


def _layout(document: Json | None) -> StorageLayout:
    return DefaultLayout() if document is None else msgspec.convert(document, StorageLayout)


def _render(template: str, name: str, entity_id: uuid.UUID) -> str:
    """`{uuid}` as is, `{name}` percent-encoded (spaces and '/' cannot split or break the path)."""
    return template.replace("{uuid}", str(entity_id)).replace("{name}", quote(name, safe=""))


def namespace_location(
    layout: Json | None, warehouse_location: str, parent_location: str | None, name: str, namespace_id: uuid.UUID
) -> str:
    """Default `location` of a new namespace: below its parent's for `full-hierarchy`, else below the base."""
    chosen = _layout(layout)
    template = getattr(chosen, "namespace", "{uuid}")
    base = parent_location if isinstance(chosen, FullHierarchy) and parent_location else warehouse_location
    return f"{base.rstrip('/')}/{_render(template, name, namespace_id)}"


def table_location(
    layout: Json | None, warehouse_location: str, namespace_location: str, name: str, table_id: uuid.UUID
) -> str:
    """Default location of a new table or view: below the namespace's, or the base for `table-only`."""
    chosen = _layout(layout)
    base = warehouse_location if isinstance(chosen, TableOnly) else namespace_location
    return f"{base.rstrip('/')}/{_render(getattr(chosen, 'table', '{uuid}'), name, table_id)}"
