"""The event base: what every fact has (stable type name, stream), the JSON alias and secret references."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

import msgspec

Json = dict[str, Any]


class Event(msgspec.Struct, frozen=True, kw_only=True):
    """A fact; `type_name` is its stable, versioned CloudEvents type and never changes once used."""

    type_name: ClassVar[str]
    stream_kind: ClassVar[str]

    @property
    def entity_id(self) -> uuid.UUID:
        raise NotImplementedError

    @property
    def stream_id(self) -> str:
        return f"{self.stream_kind}-{self.entity_id}"


class SecretReference(msgspec.Struct, frozen=True):
    """Where a secret lives in the encrypted store and a keyed fingerprint of it: never the secret itself."""

    id: uuid.UUID
    fingerprint: str
