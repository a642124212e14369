"""Talking to S3: boto3 clients, the access probe and safe failure reasons (blocking; the S3 backend's parts)."""

from __future__ import annotations

import uuid
from typing import Any, Final

import boto3
import structlog
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    SSLError,
)

from catalog_es.errors import StorageAccessError
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile, path_style

_PROBE_BODY: Final = b"catalog-es storage access probe\n"
_log = structlog.get_logger(__name__)
# S3 error codes a caller may see; anything else the endpoint answers stays in the server log (an endpoint
# is not trusted to choose what the catalog says: its text could be an internal service's secret).
_S3_ERROR_CODES: Final = frozenset(
    {
        "AccessDenied",
        "AccountProblem",
        "AllAccessDisabled",
        "AuthorizationHeaderMalformed",
        "BadRequest",
        "ExpiredToken",
        "InternalError",
        "InvalidAccessKeyId",
        "InvalidArgument",
        "InvalidBucketName",
        "InvalidBucketState",
        "InvalidObjectState",
        "InvalidRequest",
        "InvalidToken",
        "MethodNotAllowed",
        "NoSuchBucket",
        "NoSuchKey",
        "NotImplemented",
        "PermanentRedirect",
        "PreconditionFailed",
        "RequestTimeTooSkewed",
        "RequestTimeout",
        "ServiceUnavailable",
        "SignatureDoesNotMatch",
        "SlowDown",
        "TemporaryRedirect",
        "XAmzContentSHA256Mismatch",
    }
)
_CLIENT_FAILURES: Final = (
    (EndpointConnectionError, "Could not connect to the endpoint"),
    (ConnectTimeoutError, "Connecting to the endpoint timed out"),
    (ReadTimeoutError, "The endpoint did not answer in time"),
    (SSLError, "TLS handshake with the endpoint failed"),
)


def s3_client(
    profile: S3Profile,
    credential: S3AccessKeyCredential | None,
    endpoints: EndpointPolicy,
    *,
    connect_timeout: float = 10.0,
    read_timeout: float = 60.0,
    max_attempts: int = 3,
) -> Any:
    """A boto3 S3 client for the profile, once its endpoint passed the policy.

    Never boto3's default credential chain (environment, config files, instance metadata): the
    credential's keys, or unsigned requests without one. Endpoint URLs from the environment or config
    files are ignored too, so the profile alone says where requests go.

    Raises:
        EndpointNotAllowedError: the profile's endpoint is refused (before any connection).
    """
    endpoints.check(profile.endpoint)
    compat = profile.flavor == "s3-compat"
    config = Config(
        region_name=profile.region,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"total_max_attempts": max_attempts, "mode": "standard"},
        s3={"addressing_style": "path" if path_style(profile) else "virtual"},
        # S3-compatible stores often reject the newer default checksum headers.
        request_checksum_calculation="when_required" if compat else "when_supported",
        response_checksum_validation="when_required" if compat else "when_supported",
        ignore_configured_endpoint_urls=True,
    )
    if credential is None:
        config = config.merge(Config(signature_version=UNSIGNED))
        return boto3.session.Session().client("s3", endpoint_url=profile.endpoint, config=config)
    keys = {"aws_access_key_id": credential.access_key_id, "aws_secret_access_key": credential.secret_access_key}
    return boto3.session.Session().client("s3", endpoint_url=profile.endpoint, config=config, **keys)


def describe(profile: S3Profile) -> str:
    """Bucket and endpoint, for error messages."""
    endpoint = profile.endpoint or f"AWS S3 in {profile.region}"
    return f"bucket {profile.bucket!r} at {endpoint}"


def reason(exc: Exception, location: str = "") -> str:
    """A fixed phrase for the failure: a known S3 error code and the HTTP status at most, never the
    endpoint's own text (its body, message or headers). The details go to the server log."""
    _log.warning("storage request failed", location=location, error=repr(exc))
    if isinstance(exc, ClientError):
        return safe_code(exc.response.get("Error", {}).get("Code"), exc.response.get("ResponseMetadata", {}))
    for kind, phrase in _CLIENT_FAILURES:
        if isinstance(exc, kind):
            return phrase
    return f"storage client error ({type(exc).__name__})"


def safe_code(code: object, metadata: dict[str, Any] | None = None) -> str:
    """`S3 error <code> (HTTP <status>)` for a known code; otherwise the status alone."""
    status = (metadata or {}).get("HTTPStatusCode")
    shown = f"HTTP {status}" if isinstance(status, int) else "no status"
    if isinstance(code, str) and code in _S3_ERROR_CODES:
        return f"S3 error {code} ({shown})"
    return f"S3 request failed ({shown})"


def probe_bucket(profile: S3Profile, credential: S3AccessKeyCredential | None, endpoints: EndpointPolicy) -> None:
    """Write, read back and delete an object under the key prefix; fail fast on an unreachable endpoint.

    Raises:
        StorageAccessError: the endpoint is not allowed, a step failed or read back other bytes.
    """
    client = s3_client(profile, credential, endpoints, connect_timeout=3.0, read_timeout=10.0, max_attempts=2)
    key = "/".join(part for part in (profile.key_prefix, f".catalog-es-probe-{uuid.uuid4().hex}") if part)
    step = "write"
    written = False
    try:
        client.put_object(Bucket=profile.bucket, Key=key, Body=_PROBE_BODY)
        written = True
        step = "read"
        if client.get_object(Bucket=profile.bucket, Key=key)["Body"].read() != _PROBE_BODY:
            raise StorageAccessError(f"Storage access check failed for {describe(profile)}: read back other bytes")
        step = "delete"
        client.delete_object(Bucket=profile.bucket, Key=key)
        written = False
    except (BotoCoreError, ClientError) as exc:
        raise StorageAccessError(
            f"Storage access check failed for {describe(profile)}: cannot {step} s3://{profile.bucket}/{key}: "
            f"{reason(exc, f's3://{profile.bucket}/{key}')}"
        ) from exc
    finally:
        if written:
            _delete_quietly(client, profile.bucket, key)


def _delete_quietly(client: Any, bucket: str, key: str) -> None:
    try:
        client.delete_object(Bucket=bucket, Key=key)
    except (BotoCoreError, ClientError):
        return
