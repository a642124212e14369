"""When a table's clients sign S3 requests through the catalog, and the `config` keys that tell them how."""

from __future__ import annotations

from collections.abc import Collection
from typing import Final
from urllib.parse import quote

from catalog_es.identifiers import Namespace
from catalog_es.storage.profiles import S3Profile, StorageProfile

REMOTE_SIGNING: Final = "remote-signing"
VENDED_CREDENTIALS: Final = "vended-credentials"
# pyiceberg's FsspecFileIO loads its signer by this name (pyiceberg.io.fsspec.SIGNERS); Java ignores the key.
PYICEBERG_SIGNER: Final = "S3V4RestSigner"
# pyiceberg's default IO (pyarrow) cannot sign: a stock client signs only when told to use fsspec (as Lakekeeper).
PYICEBERG_SIGNING_IO: Final = "pyiceberg.io.fsspec.FsspecFileIO"


def signing_applies(profile: StorageProfile, modes: Collection[str], can_sign: bool = True) -> bool:
    """Remote signing is used when the profile enables it and the client asked for it, or when the client
    asked for nothing (or for vended credentials) and the profile vends none (STS off). As Lakekeeper; and
    only where it can work: the warehouse holds an S3 access key to sign with, and does not hand its keys to
    clients anyway (`share-static-credentials-with-clients`) unless the client asked for signing.
    """
    if not isinstance(profile, S3Profile) or not profile.remote_signing_enabled or not can_sign:
        return False
    if REMOTE_SIGNING in modes:
        return True
    if modes and VENDED_CREDENTIALS not in modes:
        return False  # e.g. Lakekeeper's `client-managed`: neither signing nor credentials
    return not profile.sts_enabled and not profile.share_static_credentials_with_clients


def remote_signing_config(
    profile: StorageProfile,
    modes: Collection[str],
    catalog_uri: str,
    prefix: str,
    namespace: Namespace,
    table: str,
    can_sign: bool = True,
) -> dict[str, str]:
    """The loadTable/createTable `config` keys for remote signing (merged over the profile's client config).

    `catalog_uri` is the catalog's base as clients reach it (`http://host:port/catalog`). The endpoint is the
    table's spec 1.11 `signRequest` route, relative to it: pyiceberg reads `s3.signer.uri` +
    `s3.signer.endpoint`, Iceberg Java 1.10 the same pair, newer clients `signer.uri` + `signer.endpoint`.
    The Iceberg 1.11 spec has no `remote-signing-config` field in LoadTableResult, so none is sent.
    `py-io-impl` switches a stock pyiceberg to its FileIO that signs; other clients ignore it.
    """
    if not isinstance(profile, S3Profile):
        return {}
    if not signing_applies(profile, modes, can_sign):
        return {"s3.remote-signing-enabled": "false"}
    encoded_namespace = "%1F".join(quote(part, safe="") for part in namespace.parts)
    endpoint = f"v1/{quote(prefix, safe='')}/namespaces/{encoded_namespace}/tables/{quote(table, safe='')}/sign"
    base = catalog_uri.rstrip("/")
    return {
        "s3.remote-signing-enabled": "true",
        "py-io-impl": PYICEBERG_SIGNING_IO,
        "s3.signer": PYICEBERG_SIGNER,
        "s3.signer.uri": base,
        "s3.signer.endpoint": endpoint,
        "signer.uri": base,
        "signer.endpoint": endpoint,
    }
