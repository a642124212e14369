"""Vended ADLS credentials: a SAS token scoped to one table's directory (read-only or read-write)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final, Literal
from urllib.parse import unquote, urlsplit

from azure.core.exceptions import AzureError
from azure.identity import ClientSecretCredential, DefaultAzureCredential
from azure.storage.filedatalake import DataLakeServiceClient, UserDelegationKey, generate_directory_sas

from catalog_es.errors import InvalidLocationError, StorageAccessError
from catalog_es.locations import location_key, normalize_location
from catalog_es.storage.adls import (
    AdlsProfile,
    AzureClientCredential,
    AzureCredential,
    AzureSharedKeyCredential,
    adls_account_host,
    adls_host,
)

SasPermissions = Literal["read", "read-write", "read-write-delete"]

DEFAULT_VALIDITY: Final = 3600
MIN_VALIDITY: Final = 120  # with the start moved back a minute, a fresh token is good for a minute at least
START_BACKDATE: Final = timedelta(seconds=60)  # tolerate clock skew between the catalog, Azure and the client
# Azure's permission letters, in the order it requires (racwdl): read and list; then add, create, write; delete.
_LETTERS: Final[dict[SasPermissions, str]] = {"read": "rl", "read-write": "racwl", "read-write-delete": "racwdl"}


def sas_key(profile: AdlsProfile) -> str:
    """`adls.sas-token.<account>.<host>`: the config key pyiceberg and Iceberg's Java ADLSFileIO look up."""
    return f"adls.sas-token.{adls_account_host(profile)}"


def sas_expiry_key(profile: AdlsProfile) -> str:
    return f"adls.sas-token-expires-at-ms.{adls_account_host(profile)}"


def table_directory(profile: AdlsProfile, table_location: str) -> str:
    """The table's directory below the filesystem, decoded as Azure names it (`wh/ns/t`).

    Raises:
        InvalidLocationError: the location is on another account or filesystem, or is the filesystem's root.
    """
    canonical = location_key(normalize_location(table_location))
    parts = urlsplit(canonical)
    if parts.scheme != "abfss" or parts.netloc != f"{profile.filesystem}@{adls_account_host(profile)}":
        raise InvalidLocationError(f"Location {table_location} is not in this warehouse's ADLS filesystem")
    directory = unquote(parts.path.strip("/"))
    if not directory:
        raise InvalidLocationError("A SAS token is scoped to a table's directory, not the whole filesystem")
    return directory


def adls_vended_config(
    profile: AdlsProfile,
    credential: AzureCredential,
    table_location: str,
    permissions: SasPermissions,
    now: datetime,
) -> dict[str, str]:
    """Table config keys with a directory SAS (`sr=d`, depth of the table's path) for the table's location.

    A shared key signs here, without a request; client credentials and the system identity first ask Azure
    for a user delegation key (blocking: run off the event loop). `now` is timezone-aware. Nothing when the
    profile has `sas-enabled` off.

    Raises:
        InvalidLocationError: the location is not a directory of this warehouse's filesystem.
        StorageAccessError: no delegation key could be obtained.
    """
    directory = table_directory(profile, table_location)
    if not profile.sas_enabled:
        return {}
    validity = max(profile.sas_token_validity_seconds or DEFAULT_VALIDITY, MIN_VALIDITY)
    start = now - START_BACKDATE
    expiry = start + timedelta(seconds=validity)
    signing_key: str | UserDelegationKey
    if isinstance(credential, AzureSharedKeyCredential):
        signing_key = credential.key
    else:
        signing_key = _delegation_key(profile, credential, start, expiry)
    token = generate_directory_sas(
        profile.account_name,
        profile.filesystem,
        directory,
        signing_key,
        permission=_LETTERS[permissions],
        expiry=expiry,
        start=start,
        protocol="https" if not (profile.endpoint or "").startswith("http://") else "https,http",
    )
    return {sas_key(profile): token, sas_expiry_key(profile): str(int(expiry.timestamp() * 1000))}


def _delegation_key(
    profile: AdlsProfile, credential: AzureCredential, start: datetime, expiry: datetime
) -> UserDelegationKey:
    """A user delegation key from Azure (Entra ID first): what a SAS is signed with without a shared key."""
    if isinstance(credential, AzureClientCredential):
        identity: ClientSecretCredential | DefaultAzureCredential = ClientSecretCredential(
            credential.tenant_id,
            credential.client_id,
            credential.client_secret,
            authority=profile.authority_host,
        )
    else:  # azure-system-identity: the one case the ambient identity is wanted
        identity = DefaultAzureCredential(authority=profile.authority_host)
    service = DataLakeServiceClient(f"https://{profile.account_name}.{adls_host(profile)}", credential=identity)
    try:
        return service.get_user_delegation_key(start, expiry)
    except AzureError as exc:
        raise StorageAccessError(f"Cannot obtain an Azure user delegation key: {type(exc).__name__}") from exc
