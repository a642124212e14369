"""The `X-Iceberg-Access-Delegation` header: which ways of reaching storage a client asks for, and what it gets."""

from __future__ import annotations

from typing import Final, Literal

from catalog_es.storage.profiles import S3Profile, StorageProfile

DelegationMode = Literal["vended-credentials", "remote-signing", "client-managed"]
HEADER: Final = "X-Iceberg-Access-Delegation"
_MODES: Final[frozenset[str]] = frozenset({"vended-credentials", "remote-signing", "client-managed"})


def parse_access_delegation(header: str | None) -> frozenset[DelegationMode]:
    """The modes named in the comma-separated header, case-insensitive.

    The spec calls the header a hint, so a mode this server does not know is ignored (not refused): a newer
    client naming a newer mode still gets what this server can give.
    """
    if not header:
        return frozenset()
    named = {part.strip().lower() for part in header.split(",")}
    return frozenset(mode for mode in _MODES if mode in named)  # type: ignore[misc]


def vends_credentials(modes: frozenset[DelegationMode], profile: StorageProfile) -> bool:
    """Whether a table response carries STS credentials: asked for, and the warehouse has STS on.

    Lakekeeper's `client-managed` means the client brings its own access, so it wins over the others; when a
    client names both vended credentials and remote signing, credentials are vended where STS is on (as
    Lakekeeper does) and signing is left to the profile's signer settings otherwise.
    """
    if "client-managed" in modes or "vended-credentials" not in modes:
        return False
    return isinstance(profile, S3Profile) and profile.sts_enabled
