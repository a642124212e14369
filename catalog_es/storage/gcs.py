"""Google Cloud Storage warehouses: the `gcs` profile, the `gcs` credentials and their location rules."""

from __future__ import annotations

import re
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json

# Google's bucket naming rules (names without dots): 3-63 lowercase letters, digits, '-' and '_',
# starting and ending with a letter or digit, not starting with "goog" nor containing "google".
_BUCKET_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]")
# What a service-account key file must hold for the catalog to sign with it.
_KEY_FIELDS: Final = ("type", "client_email", "private_key", "private_key_id")


class GcsProfile(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="gcs"
):
    """Lakekeeper's `gcs` profile fields; `endpoint` is catalog-es's: the JSON API's base URL for an
    emulator or a private endpoint (default `https://storage.googleapis.com`), used by the catalog and
    handed to clients as `gcs.service.host`."""

    bucket: str  # the bucket's name
    key_prefix: str | None = None  # the warehouse's objects go under this prefix
    sts_enabled: bool = False  # vend downscoped tokens (Google's STS) to clients that ask for them
    # the JSON API's base URL (emulators, private endpoints); unset: https://storage.googleapis.com
    endpoint: str | None = None
    storage_layout: Json | None = None  # Lakekeeper's `storage-layout` (catalog_es.storage.layout)


class GcsServiceAccountKeyCredential(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="gcs"
):
    """A service account's JSON key file, as Google issues it."""

    credential_type: Literal["service-account-key"]
    key: dict[str, Any]

    def __repr__(self) -> str:
        return f"GcsServiceAccountKeyCredential(client_email={self.key.get('client_email')!r}, private_key='***')"


class GcsSystemIdentityCredential(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="gcs"
):
    """The server's own Google identity: the only case where ambient Google credentials are used."""

    credential_type: Literal["gcp-system-identity"]


GcsCredential = GcsServiceAccountKeyCredential | GcsSystemIdentityCredential


def checked_gcs(profile: GcsProfile) -> GcsProfile:
    """The profile with its key prefix and endpoint tidied.

    Raises:
        BadRequestError: a bad bucket name, key prefix or endpoint.
    """
    bucket = profile.bucket
    if not _BUCKET_NAME.fullmatch(bucket) or bucket.startswith("goog") or "google" in bucket:
        raise BadRequestError(
            f"Invalid GCS bucket name {bucket!r}: must be 3 to 63 lowercase letters, digits, '-' and '_', starting "
            "and ending with a letter or digit, without 'goog' at the start or 'google' anywhere"
        )
    return msgspec.structs.replace(
        profile, key_prefix=_checked_key_prefix(profile.key_prefix), endpoint=_checked_endpoint(profile.endpoint)
    )


def check_gcs_credential(credential: GcsCredential) -> None:
    """Raises: BadRequestError for a key file that is not a service account's or lacks a field."""
    if isinstance(credential, GcsSystemIdentityCredential):
        return
    key = credential.key
    missing = [name for name in _KEY_FIELDS if not isinstance(key.get(name), str) or not key[name].strip()]
    if missing:
        raise BadRequestError(f"Invalid storage credential: the service account key lacks {', '.join(missing)}")
    if key["type"] != "service_account":
        raise BadRequestError("Invalid storage credential: the key's type must be 'service_account'")


def gcs_base_location(profile: GcsProfile) -> str:
    """`gs://<bucket>/<key-prefix>`, without a trailing '/'."""
    return f"gs://{profile.bucket}/{profile.key_prefix}" if profile.key_prefix else f"gs://{profile.bucket}"


def gcs_object_name(location: str) -> str:
    """The object name (no leading '/') of a `gs://bucket/name` location."""
    return urlsplit(location).path.strip("/")


def gcs_client_config(profile: GcsProfile) -> dict[str, str]:
    """What table responses tell clients about the store itself (no token: see `gcs_vended_config`)."""
    return {"gcs.service.host": profile.endpoint} if profile.endpoint else {}


def gcs_update_error(old: GcsProfile, new: GcsProfile) -> str | None:
    """Why the profile cannot change so (bucket and key prefix are immutable)."""
    if old.bucket != new.bucket or old.key_prefix != new.key_prefix:
        return "GCS bucket and key-prefix cannot change"
    return None


def _checked_key_prefix(key_prefix: str | None) -> str | None:
    if key_prefix is None:
        return None
    segments = [segment for segment in key_prefix.strip().split("/") if segment]
    tidy = "/".join(segments)
    if any(segment in (".", "..") for segment in segments):
        raise BadRequestError(f"GCS key-prefix must not contain '.' or '..' segments: {key_prefix!r}")
    if any(char in tidy for char in "?#\\[]*") or any(ord(char) < 32 for char in tidy):
        raise BadRequestError(f"GCS key-prefix contains a character that cannot appear in a location: {key_prefix!r}")
    return tidy or None


def _checked_endpoint(endpoint: str | None) -> str | None:
    if endpoint is None:
        return None
    parts = urlsplit(endpoint.strip())
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise BadRequestError(f"GCS endpoint has an invalid port: {endpoint!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc or parts.path.strip("/"):
        raise BadRequestError(f"GCS endpoint must be an http(s) URL with a host and no path, got {endpoint!r}")
    return endpoint.strip().rstrip("/")
