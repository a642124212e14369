"""Vended GCS credentials: an OAuth token downscoped (Credential Access Boundary) to one table's prefix."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from google.auth import downscoped
from google.auth.credentials import Credentials
from google.auth.exceptions import GoogleAuthError
from google.auth.transport.requests import Request
from google.oauth2 import service_account

from catalog_es.errors import InvalidLocationError, StorageAccessError
from catalog_es.locations import normalize_location
from catalog_es.storage.gcs import GcsCredential, GcsProfile, GcsServiceAccountKeyCredential
from catalog_es.storage.gcs_auth import READ_WRITE_SCOPE, source_credentials

GcsPermissions = Literal["read", "read-write", "read-write-delete"]
# Predefined roles a boundary may grant (it can only narrow what the source identity holds).
_ROLES: Final[dict[GcsPermissions, tuple[str, ...]]] = {
    "read": ("inRole:roles/storage.objectViewer",),
    "read-write": ("inRole:roles/storage.objectViewer", "inRole:roles/storage.objectCreator"),
    "read-write-delete": ("inRole:roles/storage.objectAdmin",),
}

# Exchanges source credentials and a boundary for a downscoped token and its expiry (Google's STS).
TokenExchange = Callable[[Credentials, downscoped.CredentialAccessBoundary], tuple[str, datetime]]


def table_prefix(profile: GcsProfile, table_location: str) -> str:
    """The table's object-name prefix, decoded and ending in '/' (`wh/ns/t/`).

    Raises:
        InvalidLocationError: the location is in another bucket or is the bucket's root.
    """
    parts = urlsplit(normalize_location(table_location))
    if parts.scheme != "gs" or parts.netloc != profile.bucket:
        raise InvalidLocationError(f"Location {table_location} is not in this warehouse's bucket {profile.bucket!r}")
    prefix = unquote(parts.path.strip("/"))
    if not prefix:
        raise InvalidLocationError("A downscoped token is scoped to a table's prefix, not the whole bucket")
    return f"{prefix}/"


def access_boundary(bucket: str, prefix: str, permissions: GcsPermissions) -> downscoped.CredentialAccessBoundary:
    """Objects whose names start with the prefix, and listings of that prefix only (CEL conditions)."""
    quoted_objects = _cel_string(f"projects/_/buckets/{bucket}/objects/{prefix}")
    quoted_prefix = _cel_string(prefix)
    resource = f"//storage.googleapis.com/projects/_/buckets/{bucket}"
    objects = downscoped.AccessBoundaryRule(
        available_resource=resource,
        available_permissions=list(_ROLES[permissions]),
        availability_condition=downscoped.AvailabilityCondition(
            expression=f"resource.name.startsWith({quoted_objects})", title="table objects"
        ),
    )
    listing = downscoped.AccessBoundaryRule(
        available_resource=resource,
        available_permissions=["inRole:roles/storage.objectViewer"],
        availability_condition=downscoped.AvailabilityCondition(
            expression=(f"api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith({quoted_prefix})"),
            title="table listing",
        ),
    )
    return downscoped.CredentialAccessBoundary(rules=[objects, listing])


def gcs_vended_config(
    profile: GcsProfile,
    credential: GcsCredential,
    table_location: str,
    permissions: GcsPermissions,
    exchange: TokenExchange | None = None,
) -> dict[str, str]:
    """`gcs.oauth2.token` and its expiry for the table's prefix (blocking: calls Google; run off the loop);
    nothing when the profile has `sts-enabled` off.

    Raises:
        InvalidLocationError: the location is not a prefix of this warehouse's bucket.
        StorageAccessError: the token exchange failed.
    """
    boundary = access_boundary(profile.bucket, table_prefix(profile, table_location), permissions)
    if not profile.sts_enabled:
        return {}
    token, expiry = (exchange or sts_exchange)(_exchange_source(credential), boundary)
    return {"gcs.oauth2.token": token, "gcs.oauth2.token-expires-at": str(int(expiry.timestamp() * 1000))}


def sts_exchange(source: Credentials, boundary: downscoped.CredentialAccessBoundary) -> tuple[str, datetime]:
    """Google's STS token exchange (`https://sts.googleapis.com/v1/token`) through google-auth."""
    scoped = downscoped.Credentials(source_credentials=source, credential_access_boundary=boundary)
    try:
        scoped.refresh(Request())
    except (GoogleAuthError, ValueError) as exc:
        raise StorageAccessError(f"Cannot obtain a downscoped GCS token: {type(exc).__name__}") from exc
    if scoped.expiry is None:
        raise StorageAccessError("Google's STS answered a token without an expiry")
    expiry: datetime = scoped.expiry.replace(tzinfo=UTC)  # google-auth's expiry is naive UTC
    return str(scoped.token), expiry


def _exchange_source(credential: GcsCredential) -> Credentials:
    """STS takes an OAuth access token, not a self-signed JWT: a key gets its token from Google's token URI."""
    if isinstance(credential, GcsServiceAccountKeyCredential):
        try:
            found: Credentials = service_account.Credentials.from_service_account_info(
                credential.key, scopes=[READ_WRITE_SCOPE]
            )
        except ValueError as exc:
            raise StorageAccessError(f"GCS credential cannot be used: {type(exc).__name__}") from exc
        return found
    return source_credentials(credential)


def _cel_string(text: str) -> str:
    """A CEL single-quoted string literal: backslashes and quotes escaped, so a name cannot end the literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
