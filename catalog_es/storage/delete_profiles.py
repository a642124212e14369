"""A warehouse's delete profile: drops are hard, or soft with an expiration (Lakekeeper's shape), and whether
a table drop without `purgeRequested` purges (the spec says no; Lakekeeper purges managed tables)."""

from __future__ import annotations

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json

HARD_DELETE: Json = {"type": "hard"}


class _Profile(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag_field="type",
    rename="kebab",
    forbid_unknown_fields=True,
    omit_defaults=True,
):
    # A migrating Lakekeeper user's choice: drops that do not say `purgeRequested` delete the table's files.
    purge_by_default: bool = False


class HardDelete(_Profile, frozen=True, kw_only=True, tag="hard"):
    pass


class SoftDelete(_Profile, frozen=True, kw_only=True, tag="soft"):
    expiration_seconds: int


DeleteProfile = HardDelete | SoftDelete


def decode_delete_profile(document: Json | None) -> Json:
    """The profile as stored: validated, in its canonical form; None means hard.

    Raises: BadRequestError for an unknown type, unknown fields or a non-positive expiration.
    """
    if document is None:
        return HARD_DELETE
    try:
        profile = msgspec.convert(document, DeleteProfile)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid delete-profile: {exc}") from None
    if isinstance(profile, SoftDelete) and profile.expiration_seconds <= 0:
        raise BadRequestError("delete-profile expiration-seconds must be positive")
    encoded: Json = msgspec.to_builtins(profile)
    return encoded


def purge_by_default(document: Json) -> bool:
    """Whether a table drop that does not say `purgeRequested` purges, for a stored delete profile."""
    return document.get("purge-by-default") is True
