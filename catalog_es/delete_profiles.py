"""A warehouse's delete profile: drops are hard, or soft with an expiration (Lakekeeper's shape)."""

from __future__ import annotations

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json

HARD_DELETE: Json = {"type": "hard"}


class HardDelete(msgspec.Struct, frozen=True, tag="hard", tag_field="type", forbid_unknown_fields=True):
    pass


class SoftDelete(msgspec.Struct, frozen=True, tag="soft", tag_field="type", rename="kebab", forbid_unknown_fields=True):
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
