"""Remote signing, store-neutral: what a signing request is, what it touches, and what signs it."""

from __future__ import annotations

from typing import Literal, Protocol

import msgspec

Privilege = Literal["select", "modify"]


class SignRequest(msgspec.Struct, frozen=True):
    """A client's request to the store, as it asks the catalog to sign it (spec 1.11 `RemoteSignRequest`)."""

    region: str
    method: str
    uri: str
    headers: dict[str, list[str]] = msgspec.field(default_factory=dict)
    body: str | None = None


class Scope(msgspec.Struct, frozen=True):
    """What a request touches: its store operation, the locations it names (`s3://bucket/key`), whether they are
    listing prefixes, and the privilege on a table that allows it."""

    locations: tuple[str, ...]
    privilege: Privilege
    listing: bool = False
    operation: str = "GetObject"


class RequestSigner(Protocol):
    """A backend that signs its clients' requests with the warehouse credential, which never leaves the server."""

    def scope(self, request: SignRequest) -> Scope:
        """What the request touches. Raises: ForbiddenError for anything this signer does not sign."""
        ...

    def covers(self, scope: Scope, table_location: str) -> bool:
        """Whether everything the request touches lies in the table's location."""
        ...

    def sign(self, request: SignRequest, scope: Scope) -> dict[str, list[str]]:
        """The headers to add to the request. Raises: ForbiddenError for a header or region it does not sign."""
        ...
