"""The event base: what every fact has (stable type name, stream), the JSON alias and secret references."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

import msgspec

Json = dict[str, Any]

TYPE_PREFIX = "io.catalog-es."


def parse_type_name(type_name: str) -> tuple[str, str] | None:
    """`io.catalog-es.table.committed.v1` -> (`table`, `committed`), for any version; None for another shape.

    The one place that knows the grammar of our type names: the event classes, the NATS subject and the
    registry's short forms all go through it.
    """
    if not type_name.startswith(TYPE_PREFIX):
        return None
    parts = type_name.removeprefix(TYPE_PREFIX).split(".")
    if len(parts) != 3 or not parts[2].startswith("v"):
        return None
    return parts[0], parts[1]


class Event(msgspec.Struct, frozen=True, kw_only=True):
    """A fact; `type_name` is its stable, versioned CloudEvents type and never changes once used."""

    type_name: ClassVar[str]
    stream_kind: ClassVar[str]
    entity: ClassVar[str]  # `table` of `io.catalog-es.table.committed.v1`, set from `type_name`
    action: ClassVar[str]  # `committed`

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive `entity` and `action` from `type_name` once, so a malformed name fails at import."""
        super().__init_subclass__(**kwargs)
        type_name = cls.__dict__.get("type_name")
        if type_name is None:
            return
        parsed = parse_type_name(type_name)
        if parsed is None:
            raise TypeError(f"{cls.__name__}.type_name {type_name!r} is not io.catalog-es.<entity>.<action>.v<n>")
        cls.entity, cls.action = parsed

    @property
    def entity_id(self) -> uuid.UUID:
        raise NotImplementedError

    @property
    def stream_id(self) -> str:
        return f"{self.stream_kind}-{self.entity_id}"


_UUID_TEXT = 36  # `str(uuid)`: what every stream id ends with


def split_stream_id(stream_id: str) -> tuple[str, str]:
    """`<kind>-<entity id>` → (kind, entity id). The id is the UUID the stream id ends with, so a kind may hold a
    dash (`service-principal-<uuid>`); another shape splits at its first dash."""
    if len(stream_id) > _UUID_TEXT + 1 and stream_id[-_UUID_TEXT - 1] == "-":
        return stream_id[: -_UUID_TEXT - 1], stream_id[-_UUID_TEXT:]
    kind, _, entity_id = stream_id.partition("-")
    return kind, entity_id


class SecretReference(msgspec.Struct, frozen=True):
    """Where a secret lives in the encrypted store and a keyed fingerprint of it: never the secret itself."""

    id: uuid.UUID
    fingerprint: str
