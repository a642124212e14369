"""The columns one added schema adds, drops and renames against the schema it was evolved from (by field id)."""

from __future__ import annotations

from typing import Any

import msgspec

Json = dict[str, Any]


class ColumnChanges(msgspec.Struct, frozen=True):
    """Dotted column names (`point.x`); a rename maps the old name to the new one."""

    added: list[str]
    dropped: list[str]
    renamed: dict[str, str]


def column_changes(schema: Json, base: Json | None) -> ColumnChanges:
    """`schema` against `base` (None: nothing to compare with, so no change is claimed)."""
    if base is None:
        return ColumnChanges([], [], {})
    new, old = _columns(schema), _columns(base)
    return ColumnChanges(
        added=[name for field_id, name in new.items() if field_id not in old],
        dropped=[name for field_id, name in old.items() if field_id not in new],
        renamed={old[field_id]: name for field_id, name in new.items() if field_id in old and old[field_id] != name},
    )


def base_schema(metadata: Json | None, requirements: list[Json], added_id: int | None) -> Json | None:
    """The schema a commit evolved: the one its `assert-current-schema-id` names, else the newest one older than
    the added schema (in the resulting metadata, which keeps every schema not removed)."""
    schemas = {schema.get("schema-id"): schema for schema in (metadata or {}).get("schemas", [])}
    for requirement in requirements:
        if requirement.get("type") == "assert-current-schema-id":
            return schemas.get(requirement.get("current-schema-id"))
    older = [
        schema_id for schema_id in schemas if isinstance(schema_id, int) and (added_id is None or schema_id < added_id)
    ]
    return schemas[max(older)] if older else None


def _columns(schema: Json) -> dict[int, str]:
    """Every field id with its dotted name, nested structs, list elements and map values included."""
    found: dict[int, str] = {}
    _walk(schema, "", found)
    return found


def _walk(node: Any, prefix: str, found: dict[int, str]) -> None:
    if not isinstance(node, dict):
        return
    for field in node.get("fields", []):
        name = f"{prefix}{field.get('name')}"
        found[int(field["id"])] = name
        _walk(field.get("type"), f"{name}.", found)
    if node.get("type") == "list":
        _walk(node.get("element"), f"{prefix}element.", found)
    elif node.get("type") == "map":
        _walk(node.get("key"), f"{prefix}key.", found)
        _walk(node.get("value"), f"{prefix}value.", found)
