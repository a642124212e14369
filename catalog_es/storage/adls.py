"""Azure Data Lake Storage Gen2 warehouses: the `adls` profile, the `az` credentials and their location rules."""

from __future__ import annotations

import re
from typing import Final, Literal
from urllib.parse import urlsplit

import msgspec

from catalog_es.errors import BadRequestError
from catalog_es.events import Json

DEFAULT_HOST: Final = "dfs.core.windows.net"
MAX_SAS_VALIDITY_SECONDS: Final = 7 * 24 * 3600  # Lakekeeper's limit for a generic ADLS account
# Azure's naming rules: accounts 3-24 lowercase letters and digits; filesystems (containers) 3-63 lowercase
# letters, digits and single hyphens, starting and ending with a letter or digit.
_ACCOUNT_NAME: Final = re.compile(r"[a-z0-9]{3,24}")
_FILESYSTEM_NAME: Final = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}")
_HOST: Final = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+")
_KEY_PREFIX_MAX: Final = 512  # Azure allows 1024 characters per path; tables need the rest


class AdlsProfile(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="adls"
):
    """Lakekeeper's `adls` profile fields; `endpoint` is catalog-es's: a blob endpoint URL (an emulator's
    `http://127.0.0.1:10000/<account>`, a private endpoint) that the catalog and clients use instead of
    `https://<account>.blob.<host suffix>`. Locations keep their `abfss://<filesystem>@<account>.<host>/` form."""

    filesystem: str  # the ADLS Gen2 filesystem (container)
    account_name: str  # the storage account
    key_prefix: str | None = None  # the warehouse's files go under this path
    host: str | None = None  # None: dfs.core.windows.net
    authority_host: str | None = None  # Entra ID's login host for client credentials
    sas_token_validity_seconds: int | None = None  # None: 3600
    allow_alternative_protocols: bool = False  # `wasbs://<filesystem>@<account>.blob.<suffix>/` too
    sas_enabled: bool = True  # vend SAS tokens to clients that ask for `vended-credentials`
    # a blob endpoint URL used instead of `https://<account>.blob.<suffix>` (emulators, private ones)
    endpoint: str | None = None
    storage_layout: Json | None = None  # Lakekeeper's `storage-layout` (catalog_es.storage.layout)


class AzureSharedKeyCredential(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="az"
):
    """The storage account's shared key: the catalog's IO and SAS tokens signed without a round trip."""

    credential_type: Literal["shared-access-key"]
    key: str

    def __repr__(self) -> str:
        return "AzureSharedKeyCredential(key='***')"


class AzureClientCredential(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="az"
):
    """An Entra ID application (service principal); SAS tokens then need a user delegation key."""

    credential_type: Literal["client-credentials"]
    client_id: str
    client_secret: str
    tenant_id: str

    def __repr__(self) -> str:
        return f"AzureClientCredential(client_id={self.client_id!r}, tenant_id={self.tenant_id!r}, client_secret='***')"


class AzureSystemIdentityCredential(
    msgspec.Struct, frozen=True, kw_only=True, rename="kebab", forbid_unknown_fields=True, tag_field="type", tag="az"
):
    """The server's own managed identity: the only case where an ambient Azure identity is used."""

    credential_type: Literal["azure-system-identity"]


AzureCredential = AzureSharedKeyCredential | AzureClientCredential | AzureSystemIdentityCredential


def checked_adls(profile: AdlsProfile) -> AdlsProfile:
    """The profile with its host, key prefix and endpoint tidied.

    Raises:
        BadRequestError: a bad account or filesystem name, host, key prefix, endpoint or SAS validity.
    """
    if not _ACCOUNT_NAME.fullmatch(profile.account_name):
        raise BadRequestError(
            f"Invalid ADLS account-name {profile.account_name!r}: must be 3 to 24 lowercase letters and digits"
        )
    if not _FILESYSTEM_NAME.fullmatch(profile.filesystem):
        raise BadRequestError(
            f"Invalid ADLS filesystem {profile.filesystem!r}: must be 3 to 63 lowercase letters, digits and single "
            "hyphens, starting and ending with a letter or digit"
        )
    validity = profile.sas_token_validity_seconds
    if validity is not None and not 0 < validity <= MAX_SAS_VALIDITY_SECONDS:
        raise BadRequestError(f"sas-token-validity-seconds must be between 1 and {MAX_SAS_VALIDITY_SECONDS}")
    return msgspec.structs.replace(
        profile,
        host=_checked_host(profile.host),
        key_prefix=_checked_key_prefix(profile.key_prefix),
        authority_host=_checked_url(profile.authority_host, "authority-host", https_only=True),
        endpoint=_checked_url(profile.endpoint, "endpoint", https_only=False),
    )


def check_azure_credential(credential: AzureCredential) -> None:
    """Raises: BadRequestError for an empty key or client field."""
    values = msgspec.to_builtins(credential)
    empty = [name for name, value in values.items() if isinstance(value, str) and not value.strip()]
    if empty:
        raise BadRequestError(f"Invalid storage credential: {', '.join(sorted(empty))} must not be empty")


def adls_host(profile: AdlsProfile) -> str:
    """The DFS host suffix of the account (`dfs.core.windows.net` by default)."""
    return profile.host or DEFAULT_HOST


def adls_account_host(profile: AdlsProfile) -> str:
    """`<account>.<host>`: the location's host and the suffix of the vended SAS config keys."""
    return f"{profile.account_name}.{adls_host(profile)}"


def adls_base_location(profile: AdlsProfile) -> str:
    """`abfss://<filesystem>@<account>.<host>/<key-prefix>`, without a trailing '/'."""
    base = f"abfss://{profile.filesystem}@{adls_account_host(profile)}"
    return f"{base}/{profile.key_prefix}" if profile.key_prefix else base


def adls_schemes(profile: AdlsProfile) -> tuple[str, ...]:
    """`abfss`, and `wasbs` when the profile allows alternative protocols."""
    return ("abfss", "wasbs") if profile.allow_alternative_protocols else ("abfss",)


def adls_blob_endpoint(profile: AdlsProfile) -> str:
    """The Blob service URL requests go to: the profile's endpoint, or `https://<account>.blob.<suffix>`."""
    if profile.endpoint:
        return profile.endpoint
    suffix = adls_host(profile).removeprefix("dfs.")
    return f"https://{profile.account_name}.blob.{suffix}"


def adls_blob_path(location: str) -> str:
    """The path below the filesystem of an `abfss://fs@host/path` location (no leading '/')."""
    return urlsplit(location).path.strip("/")


def adls_client_config(profile: AdlsProfile) -> dict[str, str]:
    """What table responses tell clients about the store itself (no credential: see `adls_vended_config`).

    For a custom endpoint, pyiceberg's pyarrow FileIO keys that point the client at it."""
    if not profile.endpoint:
        return {}
    parts = urlsplit(profile.endpoint)
    return {
        "adls.blob-storage-authority": parts.netloc,
        "adls.blob-storage-scheme": parts.scheme,
        "adls.dfs-storage-authority": parts.netloc,
        "adls.dfs-storage-scheme": parts.scheme,
    }


def adls_update_error(old: AdlsProfile, new: AdlsProfile) -> str | None:
    """Why the profile cannot change so (Lakekeeper: filesystem, key prefix, hosts are immutable)."""
    for field in ("account_name", "filesystem", "key_prefix", "authority_host", "host"):
        if getattr(old, field) != getattr(new, field):
            return f"ADLS {field.replace('_', '-')} cannot change"
    return None


def _checked_host(host: str | None) -> str | None:
    if host is None:
        return None
    tidy = host.strip().lower().removeprefix("https://").rstrip("/")
    if not _HOST.fullmatch(tidy):
        raise BadRequestError(f"Invalid ADLS host {host!r}: expected a DNS suffix such as {DEFAULT_HOST}")
    return None if tidy == DEFAULT_HOST else tidy


def _checked_key_prefix(key_prefix: str | None) -> str | None:
    if key_prefix is None:
        return None
    segments = [segment for segment in key_prefix.strip().split("/") if segment]
    tidy = "/".join(segments)
    if any(segment in (".", "..") for segment in segments):
        raise BadRequestError(f"ADLS key-prefix must not contain '.' or '..' segments: {key_prefix!r}")
    if any(char in tidy for char in "?#\\") or any(ord(char) < 32 for char in tidy):
        raise BadRequestError(f"ADLS key-prefix contains a character that cannot appear in a location: {key_prefix!r}")
    if len(tidy) > _KEY_PREFIX_MAX:
        raise BadRequestError(f"ADLS key-prefix must be at most {_KEY_PREFIX_MAX} characters")
    return tidy or None


def _checked_url(url: str | None, field: str, *, https_only: bool) -> str | None:
    if url is None:
        return None
    parts = urlsplit(url.strip())
    schemes = ("https",) if https_only else ("http", "https")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise BadRequestError(f"ADLS {field} has an invalid port: {url!r}") from None
    if parts.scheme not in schemes or not parts.hostname or "@" in parts.netloc or parts.query or parts.fragment:
        raise BadRequestError(f"ADLS {field} must be an {'/'.join(schemes)} URL with a host, got {url!r}")
    return url.strip().rstrip("/")
