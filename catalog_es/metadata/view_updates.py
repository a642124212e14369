"""The REST spec's view requirements and updates (`ViewRequirement`, `ViewUpdate`) as tagged unions."""

from __future__ import annotations

from typing import Any

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json


class _Update(msgspec.Struct, frozen=True, tag_field="action", rename="kebab"):
    """Base of the REST spec's `ViewUpdate` union."""


class AssignUUID(_Update, frozen=True, tag="assign-uuid"):
    uuid: str


class UpgradeFormatVersion(_Update, frozen=True, tag="upgrade-format-version"):
    format_version: int


class AddSchema(_Update, frozen=True, tag="add-schema"):
    schema: Json


class SetLocation(_Update, frozen=True, tag="set-location"):
    location: str


class SetProperties(_Update, frozen=True, tag="set-properties"):
    updates: dict[str, str]


class RemoveProperties(_Update, frozen=True, tag="remove-properties"):
    removals: list[str]


class AddViewVersion(_Update, frozen=True, tag="add-view-version"):
    view_version: Json


class SetCurrentViewVersion(_Update, frozen=True, tag="set-current-view-version"):
    view_version_id: int


ViewUpdate = (
    AssignUUID
    | UpgradeFormatVersion
    | AddSchema
    | SetLocation
    | SetProperties
    | RemoveProperties
    | AddViewVersion
    | SetCurrentViewVersion
)


class AssertViewUUID(msgspec.Struct, frozen=True, tag_field="type", tag="assert-view-uuid"):
    """The spec's only `ViewRequirement`."""

    uuid: str


def _decode(target: Any, value: Any, what: str) -> Any:
    try:
        return msgspec.convert(value, target)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid {what}: {exc}") from None


def parse_view_changes(requirements: Any, updates: Any) -> tuple[list[AssertViewUUID], list[ViewUpdate]]:
    """Raises: BadRequestError for an unknown type or action, or a malformed entry (spec: 400)."""
    parsed_requirements: list[AssertViewUUID] = _decode(list[AssertViewUUID], requirements, "view requirements")
    parsed_updates: list[ViewUpdate] = _decode(list[ViewUpdate], updates, "view updates")
    return parsed_requirements, parsed_updates
