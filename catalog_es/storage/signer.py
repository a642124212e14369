"""SigV4-signing a client's S3 request with the warehouse credential (botocore's S3 signer); the keys stay here."""

from __future__ import annotations

import hashlib
from typing import Any, Final

from botocore.auth import UNSIGNED_PAYLOAD, S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from catalog_es.errors import ForbiddenError
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile
from catalog_es.storage.sign_headers import signed_headers

_CONTENT_SHA256: Final = "x-amz-content-sha256"


class _KnownPayloadAuth(S3SigV4Auth):  # type: ignore[misc]  # botocore ships no type hints
    """botocore's S3 signer, with the payload hash given instead of read from a body the server never sees."""

    def __init__(self, credentials: Credentials, region: str, payload_hash: str) -> None:
        super().__init__(credentials, "s3", region)
        self._payload_hash = payload_hash

    def payload(self, request: Any) -> str:
        return self._payload_hash


def sign_request(
    credential: S3AccessKeyCredential,
    profile: S3Profile,
    method: str,
    uri: str,
    headers: dict[str, list[str]],
    body: str | None = None,
) -> dict[str, list[str]]:
    """The headers to add to the client's request so that S3 accepts it: `Authorization`, `x-amz-date`,
    `x-amz-content-sha256` when the client did not send it (and a session token with temporary keys).

    Only the client's headers `signed_headers` allows are signed; the host is the URL's. Only new or changed
    headers come back: pyiceberg adds them to its request (a repeated header would
    be sent twice) and Iceberg Java keeps its own. The payload hash is the client's `x-amz-content-sha256`,
    else `UNSIGNED-PAYLOAD`; a body the server checked (DeleteObjects) is bound by its SHA-256.

    Raises: ForbiddenError when the client's payload hash contradicts the checked body, or for a header
    `signed_headers` refuses.
    """
    kept = signed_headers(profile, uri, headers)
    claimed = next((values for name, values in kept.items() if name.lower() == _CONTENT_SHA256), None)
    payload_hash = claimed[0] if claimed else UNSIGNED_PAYLOAD
    if body is not None:
        digest = hashlib.sha256(body.encode()).hexdigest()
        if claimed and claimed[0] != digest:
            raise ForbiddenError("x-amz-content-sha256 does not match the body that was checked")
        payload_hash = digest
    request = AWSRequest(method=method.upper(), url=uri, headers={name: ", ".join(v) for name, v in kept.items()})
    keys = Credentials(credential.access_key_id, credential.secret_access_key)
    _KnownPayloadAuth(keys, profile.region, payload_hash).add_auth(request)
    sent = {name.lower(): ", ".join(values) for name, values in kept.items()}
    return {name: [value] for name, value in request.headers.items() if sent.get(name.lower()) != value}
