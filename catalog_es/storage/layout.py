"""Storage layouts (Lakekeeper's `storage-layout`): where new namespaces and tables go under the warehouse."""

from __future__ import annotations

import uuid
from typing import Final
from urllib.parse import quote

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json


class _Layout(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    """Base of every layout: tagged by `type`, unknown fields refused."""


class DefaultLayout(_Layout, frozen=True, kw_only=True, tag="default"):
    """`<base>/<namespace uuid>/<table uuid>`: catalog-es's layout since before layouts were configurable."""


class ParentNamespaceAndTable(_Layout, frozen=True, kw_only=True, tag="parent-namespace-and-table"):
    """One directory for the direct parent namespace, one for the table or view."""

    namespace: str = "{uuid}"
    tabular: str = "{uuid}"


class FullHierarchy(_Layout, frozen=True, kw_only=True, tag="full-hierarchy"):
    """One directory per namespace level, one for the table or view."""

    namespace: str = "{uuid}"
    tabular: str = "{uuid}"


class TabularOnly(_Layout, frozen=True, kw_only=True, tag="tabular-only"):
    """Tables and views directly under the warehouse base; the template must hold `{uuid}` so two names cannot
    collide."""

    tabular: str = "{uuid}"


StorageLayout = DefaultLayout | ParentNamespaceAndTable | FullHierarchy | TabularOnly

# Lakekeeper's first spelling (`table`, `table-only`), kept as an alias of its current one (`tabular`, `tabular-only`).
_OLD_TYPES: Final = {"table-only": "tabular-only"}


def _current_spelling(document: Json) -> Json:
    """The layout with the old spelling's names replaced. Raises: BadRequestError when both spellings are given."""
    if not isinstance(document, dict):
        return document
    renamed = dict(document)
    kind = renamed.get("type")
    if isinstance(kind, str):
        renamed["type"] = _OLD_TYPES.get(kind, kind)
    if "table" in renamed:
        if "tabular" in renamed:
            raise BadRequestError("Invalid storage-layout: give `tabular` or its old name `table`, not both")
        renamed["tabular"] = renamed.pop("table")
    return renamed


def decode_layout(document: Json) -> Json:
    """The layout as stored (Lakekeeper's current spelling): validated, defaults filled in.

    Raises:
        BadRequestError: an unknown `type` or field, an empty template or one with '/' (a template names one
            directory), a `tabular-only` template without `{uuid}`.
    """
    try:
        layout = msgspec.convert(_current_spelling(document), StorageLayout)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid storage-layout: {exc}") from None
    templates = {"tabular": getattr(layout, "tabular", "{uuid}"), "namespace": getattr(layout, "namespace", "{uuid}")}
    for kind, template in templates.items():
        if not template.strip():
            raise BadRequestError(f"Invalid storage-layout: the {kind} template must not be empty")
        if "/" in template or "\\" in template or template in (".", ".."):
            raise BadRequestError(f"Invalid storage-layout: the {kind} template {template!r} must name one directory")
    if isinstance(layout, TabularOnly) and "{uuid}" not in layout.tabular:
        raise BadRequestError("Invalid storage-layout: a tabular-only layout's template must contain {uuid}")
    encoded: Json = msgspec.to_builtins(layout)
    return encoded


def _layout(document: Json | None) -> StorageLayout:
    return DefaultLayout() if document is None else msgspec.convert(_current_spelling(document), StorageLayout)


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
    """Default location of a new table or view: below the namespace's, or the base for `tabular-only`."""
    chosen = _layout(layout)
    base = warehouse_location if isinstance(chosen, TabularOnly) else namespace_location
    return f"{base.rstrip('/')}/{_render(getattr(chosen, 'tabular', '{uuid}'), name, table_id)}"
