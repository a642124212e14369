"""Who is asking: the authenticated user (`oidc~<subject>`) or the anonymous caller when authentication is off."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

ANONYMOUS_ID = "anonymous"


class Principal(msgspec.Struct, frozen=True):
    user_id: str
    name: str
    email: str | None = None
    user_type: Literal["human", "application"] = "application"
    roles: tuple[str, ...] = ()
    authenticated: bool = False


ANONYMOUS = Principal(user_id=ANONYMOUS_ID, name=ANONYMOUS_ID)


def request_principal(scope: Any) -> Principal:
    """The principal the authentication middleware put in the request scope (anonymous if none)."""
    principal = scope.get("state", {}).get("principal")
    return principal if isinstance(principal, Principal) else ANONYMOUS
