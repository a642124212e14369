"""Warehouse storage profiles and credentials: wire shapes, validation, update rules and IO settings."""

from __future__ import annotations

import ipaddress
import re
from typing import Final, Literal
from urllib.parse import urlsplit

import msgspec

from catalog_es.errors import BadRequestError, InvalidLocationError
from catalog_es.events import Json
from catalog_es.locations import normalize_location
from catalog_es.storage.adls import (
    AdlsProfile,
    AzureClientCredential,
    AzureCredential,
    AzureSharedKeyCredential,
    AzureSystemIdentityCredential,
    adls_base_location,
    adls_schemes,
    adls_update_error,
    check_azure_credential,
    checked_adls,
)
from catalog_es.storage.gcs import (
    GcsCredential,
    GcsProfile,
    GcsServiceAccountKeyCredential,
    GcsSystemIdentityCredential,
    check_gcs_credential,
    checked_gcs,
    gcs_base_location,
    gcs_update_error,
)
from catalog_es.storage.layout import decode_layout
from catalog_es.storage.outbound import SystemIdentity

# AWS's general-purpose bucket naming rules (also enforced for s3-compatible stores).
_BUCKET_NAME: Final = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


class _Profile(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type"):
    """Base of every profile: kebab-case fields, unknown fields refused, tagged by `type`."""

    # Lakekeeper's `storage-layout` (catalog_es.storage.layout); None: the default layout.
    storage_layout: Json | None = None


class FileProfile(_Profile, frozen=True, kw_only=True, tag="file"):
    """Local filesystem under an absolute path (embedded mode and tests)."""

    location: str  # absolute `file://` URI inside the server's file storage roots


class S3Profile(_Profile, frozen=True, kw_only=True, tag="s3"):
    """An S3 bucket (AWS or an S3-compatible store), optionally under a key prefix (Lakekeeper's fields)."""

    bucket: str  # the bucket's name
    region: str  # the bucket's region (any value an S3-compatible store accepts)
    sts_enabled: bool = False  # vend temporary STS credentials to clients that ask for `vended-credentials`
    key_prefix: str | None = None  # the warehouse's objects go under this key prefix
    endpoint: str | None = None  # an S3-compatible store's URL; its host must be in `s3_endpoint_allowed_hosts`
    path_style_access: bool | None = None  # None: path style when an endpoint is set, as pyarrow does
    # Lakekeeper's flavors; "minio" is its alias of "s3-compat" and is stored as that.
    flavor: Literal["aws", "s3-compat", "minio"] = "aws"
    # Clients get the warehouse's own keys only when this says so (otherwise: vended STS keys, or the signer).
    share_static_credentials_with_clients: bool = False
    # Clients sign through the catalog (api/catalog/sign.py) where STS vends nothing. On by default, as in
    # Lakekeeper, whose payloads rely on it; a client that brings its own keys opts out with the access-delegation
    # header `client-managed`, and a warehouse whose profile says `false` (stored before this default) keeps it.
    remote_signing_enabled: bool = True
    push_s3_delete_disabled: bool = False  # tell clients not to delete objects themselves (`s3.delete-enabled=false`)
    allow_alternative_protocols: bool = False  # accept `s3a://` and `s3n://` locations too
    assume_role_arn: str | None = None  # the role vended credentials assume when `sts-role-arn` is unset
    sts_role_arn: str | None = None  # the role vended credentials assume, scoped to the table (AssumeRole)
    sts_endpoint: str | None = None  # the STS endpoint; unset: the profile's `endpoint`, else AWS's regional one
    sts_token_validity_seconds: int = 3600  # lifetime of vended credentials
    # Session tags go with every AssumeRole (catalog_es/storage/sts.py); the KMS key enters the session policy.
    sts_session_tags: dict[str, str] = {}
    # How the signer reads the bucket from a request URL: from the host, the path, or `auto` (either).
    remote_signing_url_style: Literal["auto", "path", "virtual_host"] = "auto"
    aws_kms_key_arn: str | None = None  # the KMS key objects are encrypted with (allowed in the vended session policy)
    # Lakekeeper's field, accepted and kept: boto3 already chooses the checksums its DeleteObjects calls need.
    legacy_md5_behavior: bool | None = None


StorageProfile = FileProfile | S3Profile | AdlsProfile | GcsProfile


class S3AccessKeyCredential(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="s3"
):
    """A static S3 key pair; `repr` never shows the secret."""

    credential_type: Literal["access-key"]
    access_key_id: str
    secret_access_key: str
    external_id: str | None = None

    def __repr__(self) -> str:
        return f"S3AccessKeyCredential(access_key_id={self.access_key_id!r}, secret_access_key='***')"


StorageCredential = S3AccessKeyCredential | AzureCredential | GcsCredential

# Lakekeeper spells the key pair `aws-access-key-id`/`aws-secret-access-key`; the short form stays an alias
# (and is the form kept in the secret store, so credentials stored before keep decoding).
_CREDENTIAL_ALIASES: Final = {"aws-access-key-id": "access-key-id", "aws-secret-access-key": "secret-access-key"}

_CREDENTIALS: Final[dict[tuple[object, object], type[StorageCredential]]] = {
    ("s3", "access-key"): S3AccessKeyCredential,
    ("az", "shared-access-key"): AzureSharedKeyCredential,
    ("az", "client-credentials"): AzureClientCredential,
    ("az", "azure-system-identity"): AzureSystemIdentityCredential,
    ("gcs", "service-account-key"): GcsServiceAccountKeyCredential,
    ("gcs", "gcp-system-identity"): GcsSystemIdentityCredential,
}
# Credentials that are the server's own cloud identity (Lakekeeper's `*-system-identity`; AWS's is not supported).
_SYSTEM_IDENTITIES: Final[dict[tuple[object, object], SystemIdentity]] = {
    ("s3", "aws-system-identity"): "aws",
    ("az", "azure-system-identity"): "azure",
    ("gcs", "gcp-system-identity"): "gcp",
}
# Which credential types each profile type can use.
_FITS: Final[dict[type[StorageProfile], tuple[type[StorageCredential], ...]]] = {
    S3Profile: (S3AccessKeyCredential,),
    AdlsProfile: (AzureSharedKeyCredential, AzureClientCredential, AzureSystemIdentityCredential),
    GcsProfile: (GcsServiceAccountKeyCredential, GcsSystemIdentityCredential),
}


def decode_profile(document: Json) -> StorageProfile:
    """The profile a client sent, validated and with its key prefix and endpoint tidied.

    Raises:
        BadRequestError: unknown fields or `type`, wrong types, a relative file location, a bad bucket name.
    """
    if not isinstance(document, dict):
        raise BadRequestError("Storage profile must be a JSON object")
    try:
        profile = msgspec.convert(document, StorageProfile)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid storage profile: {exc}") from exc
    if isinstance(profile, FileProfile):
        return _checked_file(profile)
    if isinstance(profile, AdlsProfile):
        return msgspec.structs.replace(checked_adls(profile), storage_layout=_checked_layout(profile.storage_layout))
    if isinstance(profile, GcsProfile):
        return msgspec.structs.replace(checked_gcs(profile), storage_layout=_checked_layout(profile.storage_layout))
    return _checked_s3(profile)


def decode_credential(document: Json) -> StorageCredential:
    """The credential a client sent.

    Raises:
        BadRequestError: an unknown `type`/`credential-type` pair, unknown fields, missing or empty keys.
    """
    if not isinstance(document, dict):
        raise BadRequestError("Storage credential must be a JSON object")
    kind = _CREDENTIALS.get((document.get("type"), document.get("credential-type")))
    if kind is None:
        raise BadRequestError(
            f"Unsupported storage credential: type {document.get('type')!r}, "
            f"credential-type {document.get('credential-type')!r} (supported: "
            + ", ".join(f"{kind}/{name}" for kind, name in _CREDENTIALS)
            + ")"
        )
    document = _unaliased(document)
    try:
        credential = msgspec.convert(document, kind)
    except msgspec.ValidationError as exc:
        raise BadRequestError(f"Invalid storage credential: {exc}") from exc
    if isinstance(credential, S3AccessKeyCredential):
        if not credential.access_key_id.strip() or not credential.secret_access_key.strip():
            raise BadRequestError("Invalid storage credential: access-key-id and secret-access-key must not be empty")
    elif isinstance(credential, GcsServiceAccountKeyCredential | GcsSystemIdentityCredential):
        check_gcs_credential(credential)
    else:
        check_azure_credential(credential)
    return credential


def system_identity_of(document: Json | None) -> SystemIdentity | None:
    """The cloud whose system identity a credential document asks the server to use (None: a credential of its
    own). Read off the raw document, so a refusal needs neither decoding nor anything outbound."""
    if not isinstance(document, dict):
        return None
    return _SYSTEM_IDENTITIES.get((document.get("type"), document.get("credential-type")))


def check_credential_fits(profile: StorageProfile, credential: StorageCredential | None) -> None:
    """Raises: BadRequestError for a credential of another store than the profile's (an S3 key for ADLS)."""
    if credential is not None and not isinstance(credential, _FITS.get(type(profile), ())):
        tag = type(credential).__struct_config__.tag
        raise BadRequestError(f"A {_kind(profile)} storage profile cannot use a {tag!r} credential")


def _unaliased(document: Json) -> Json:
    """The credential with Lakekeeper's key names mapped to the stored ones.

    Raises:
        BadRequestError: both spellings of one key are given.
    """
    renamed = dict(document)
    for lakekeeper, short in _CREDENTIAL_ALIASES.items():
        if lakekeeper in renamed:
            if short in renamed:
                raise BadRequestError(f"Invalid storage credential: give {lakekeeper} or {short}, not both")
            renamed[short] = renamed.pop(lakekeeper)
    return renamed


def encode_profile(profile: StorageProfile) -> Json:
    """The profile as stored in events and the read model (profiles never hold secrets)."""
    document: Json = msgspec.to_builtins(profile)
    return document


def encode_credential(credential: StorageCredential) -> Json:
    """The credential as a JSON document, for the secret store only."""
    document: Json = msgspec.to_builtins(credential)
    return document


def base_location(profile: StorageProfile) -> str:
    """The warehouse's base location, canonical (`file:///abs/path`, `s3://bucket/key-prefix`)."""
    if isinstance(profile, FileProfile):
        return normalize_location(profile.location)
    if isinstance(profile, AdlsProfile):
        return normalize_location(adls_base_location(profile))
    if isinstance(profile, GcsProfile):
        return normalize_location(gcs_base_location(profile))
    return normalize_location(f"s3://{profile.bucket}/{profile.key_prefix or ''}")


def location_schemes(profile: StorageProfile) -> tuple[str, ...]:
    """URI schemes a table location in this warehouse may use (s3a/s3n only when allowed)."""
    if isinstance(profile, FileProfile):
        return ("file",)
    if isinstance(profile, AdlsProfile):
        return adls_schemes(profile)
    if isinstance(profile, GcsProfile):
        return ("gs",)
    return ("s3", "s3a", "s3n") if profile.allow_alternative_protocols else ("s3",)


def check_profile_update(old: StorageProfile, new: StorageProfile) -> None:
    """Refuse changes that would orphan existing data (Lakekeeper's ProfileCompatible step).

    Raises:
        BadRequestError: another type, bucket, key prefix or file location; another region without an endpoint.
    """
    if type(old) is not type(new):
        raise BadRequestError(f"Storage type cannot change from {_kind(old)} to {_kind(new)}")
    if base_location(old) != base_location(new):
        raise BadRequestError(
            f"Storage location cannot change from {base_location(old)} to {base_location(new)} "
            "(bucket, key-prefix and file location are immutable)"
        )
    if isinstance(old, AdlsProfile) and isinstance(new, AdlsProfile) and (reason := adls_update_error(old, new)):
        raise BadRequestError(reason)
    if isinstance(old, GcsProfile) and isinstance(new, GcsProfile) and (reason := gcs_update_error(old, new)):
        raise BadRequestError(reason)
    if isinstance(old, S3Profile) and isinstance(new, S3Profile) and old.region != new.region and not new.endpoint:
        raise BadRequestError(
            f"Region cannot change from {old.region} to {new.region} (only for stores with a custom endpoint)"
        )


def path_style(profile: S3Profile) -> bool:
    """Whether requests name the bucket in the path; by default only for a custom endpoint (as pyarrow does)."""
    return profile.path_style_access if profile.path_style_access is not None else profile.endpoint is not None


def _kind(profile: StorageProfile) -> str:
    return {FileProfile: "file", S3Profile: "s3", AdlsProfile: "adls", GcsProfile: "gcs"}[type(profile)]


def _checked_file(profile: FileProfile) -> FileProfile:
    location = profile.location.strip()
    if not (location.startswith("/") or location.startswith("file:")):
        raise BadRequestError(f"File storage location must be an absolute path or file: URI, got {location!r}")
    try:
        canonical = normalize_location(location)
    except InvalidLocationError as exc:
        raise BadRequestError(f"Invalid file storage location: {exc}") from exc
    if not canonical.startswith("file:///") or canonical == "file:///":
        raise BadRequestError(f"File storage location must be a local directory below '/', got {location!r}")
    return msgspec.structs.replace(profile, location=location, storage_layout=_checked_layout(profile.storage_layout))


def _checked_s3(profile: S3Profile) -> S3Profile:
    _check_bucket(profile.bucket)
    if not profile.region.strip():
        raise BadRequestError("S3 region must not be empty")
    key_prefix = _checked_key_prefix(profile.key_prefix)
    endpoint = _checked_endpoint(profile.endpoint)
    if profile.sts_token_validity_seconds <= 0:
        raise BadRequestError("sts-token-validity-seconds must be positive")
    return msgspec.structs.replace(
        profile,
        key_prefix=key_prefix,
        endpoint=endpoint,
        flavor="s3-compat" if profile.flavor == "minio" else profile.flavor,
        storage_layout=_checked_layout(profile.storage_layout),
    )


def _checked_layout(layout: Json | None) -> Json | None:
    return None if layout is None else decode_layout(layout)


def _check_bucket(bucket: str) -> None:
    reason = None
    if not _BUCKET_NAME.fullmatch(bucket):
        reason = "3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit"
    elif ".." in bucket:
        reason = "no two adjacent periods"
    elif _is_ip_address(bucket):
        reason = "not formatted as an IP address"
    if reason:
        raise BadRequestError(f"Invalid S3 bucket name {bucket!r}: must be {reason}")


def _is_ip_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _checked_key_prefix(key_prefix: str | None) -> str | None:
    if key_prefix is None:
        return None
    segments = [segment for segment in key_prefix.strip().split("/") if segment]
    if any(segment in (".", "..") for segment in segments):
        raise BadRequestError(f"S3 key-prefix must not contain '.' or '..' segments: {key_prefix!r}")
    if any(char in key_prefix for char in "?#\\") or any(ord(char) < 32 for char in key_prefix):
        raise BadRequestError(f"S3 key-prefix contains a character that cannot appear in a location: {key_prefix!r}")
    return "/".join(segments) or None


def _checked_endpoint(endpoint: str | None) -> str | None:
    if endpoint is None:
        return None
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadRequestError(f"S3 endpoint must be an http(s) URL with a host, got {endpoint!r}")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        raise BadRequestError(f"S3 endpoint has an invalid port: {endpoint!r}") from exc
    return endpoint.strip().rstrip("/")
