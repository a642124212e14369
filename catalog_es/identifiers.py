"""Namespace and table identifiers: case-preserving names with case-insensitive keys."""

from __future__ import annotations

import uuid

import msgspec

# Iceberg REST spec 1.11 §"namespace-separator": multi-level namespaces travel as one path
# segment with parts joined by the unit separator 0x1F.
NAMESPACE_SEPARATOR = "\x1f"
NIL_PROJECT_ID = uuid.UUID(int=0)


class Namespace(msgspec.Struct, frozen=True):
    """A namespace as the client spelled it; `key` is what names compare by."""

    parts: tuple[str, ...]

    @classmethod
    def from_path(cls, segment: str) -> Namespace:
        """Decode the URL form (already percent-decoded) into its parts."""
        return cls(tuple(segment.split(NAMESPACE_SEPARATOR)))

    @property
    def key(self) -> str:
        return NAMESPACE_SEPARATOR.join(name_key(part) for part in self.parts)

    @property
    def parent(self) -> Namespace | None:
        return Namespace(self.parts[:-1]) if len(self.parts) > 1 else None

    def __str__(self) -> str:
        return ".".join(self.parts)


def name_key(name: str) -> str:
    """Names are case-insensitive but case-preserving, as in Lakekeeper."""
    return name.casefold()


def validate_name(name: str, what: str) -> None:
    """Reject names no engine can address: empty, or containing the namespace separator."""
    if not name or NAMESPACE_SEPARATOR in name:
        raise ValueError(f"Invalid {what} name: {name!r}")
