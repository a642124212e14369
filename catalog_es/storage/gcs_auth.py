"""OAuth access for GCS warehouses: the catalog's own token from the profile's credential (google-auth)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

import google.auth
from google.auth.credentials import Credentials
from google.auth.exceptions import GoogleAuthError
from google.auth.transport.requests import Request
from google.oauth2 import service_account

from catalog_es.errors import StorageAccessError
from catalog_es.storage.gcs import GcsCredential, GcsServiceAccountKeyCredential

READ_WRITE_SCOPE: Final = "https://www.googleapis.com/auth/devstorage.read_write"


def source_credentials(credential: GcsCredential | None) -> Credentials:
    """google-auth credentials for the catalog itself.

    A service-account key signs its own JWT access token (Google's self-signed JWT: no token endpoint is
    called); only `gcp-system-identity` uses Google's default chain, the one case an ambient identity is wanted.

    Raises:
        StorageAccessError: no credential, or the key cannot sign.
    """
    if credential is None:
        raise StorageAccessError("GCS storage needs a credential (service-account-key or gcp-system-identity)")
    try:
        if isinstance(credential, GcsServiceAccountKeyCredential):
            signer = service_account.Credentials.from_service_account_info(credential.key, scopes=[READ_WRITE_SCOPE])
            signing: Credentials = signer.with_always_use_jwt_access(True)
            return signing
        found, _ = google.auth.default(scopes=[READ_WRITE_SCOPE])
    except (GoogleAuthError, ValueError) as exc:
        raise StorageAccessError(f"GCS credential cannot be used: {type(exc).__name__}") from exc
    return found


def access_token(credentials: Credentials) -> tuple[str, datetime]:
    """A fresh token and when it expires (UTC).

    Raises:
        StorageAccessError: the token cannot be made.
    """
    try:
        credentials.refresh(Request())
    except (GoogleAuthError, ValueError) as exc:
        raise StorageAccessError(f"Cannot obtain a GCS access token: {type(exc).__name__}") from exc
    expiry = credentials.expiry or datetime.now(UTC).replace(tzinfo=None) + timedelta(minutes=30)
    return str(credentials.token), expiry.replace(tzinfo=UTC)  # google-auth's expiry is naive UTC
