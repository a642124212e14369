"""Talking to a warehouse's storage: boto3 S3 clients, access probes and readable failure reasons (blocking)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from catalog_es.errors import StorageAccessError

if TYPE_CHECKING:
    from catalog_es.storage_profiles import S3Profile, StorageCredential

_PROBE_BODY: Final = b"catalog-es storage access probe\n"


def path_style(profile: S3Profile) -> bool:
    """Whether requests name the bucket in the path; by default only for a custom endpoint (as pyarrow does)."""
    return profile.path_style_access if profile.path_style_access is not None else profile.endpoint is not None


def s3_client(
    profile: S3Profile,
    credential: StorageCredential | None,
    *,
    connect_timeout: float = 10.0,
    read_timeout: float = 60.0,
    max_attempts: int = 3,
) -> Any:
    """A boto3 S3 client for the profile; without a credential boto3's default chain applies."""
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
    )
    keys: dict[str, str] = {}
    if credential is not None:
        keys = {"aws_access_key_id": credential.access_key_id, "aws_secret_access_key": credential.secret_access_key}
    return boto3.session.Session().client("s3", endpoint_url=profile.endpoint, config=config, **keys)


def describe(profile: S3Profile) -> str:
    """Bucket and endpoint, for error messages."""
    endpoint = profile.endpoint or f"AWS S3 in {profile.region}"
    return f"bucket {profile.bucket!r} at {endpoint}"


def reason(exc: Exception) -> str:
    """The S3 error code and message, or the client-side failure."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code") or exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
        return f"{code}: {error.get('Message') or 'no message'}"
    return str(exc) or type(exc).__name__


def probe_bucket(profile: S3Profile, credential: StorageCredential | None) -> None:
    """Write, read back and delete an object under the key prefix; fail fast on an unreachable endpoint.

    Raises:
        StorageAccessError: a step failed or read back other bytes.
    """
    client = s3_client(profile, credential, connect_timeout=3.0, read_timeout=10.0, max_attempts=2)
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
            f"{reason(exc)}"
        ) from exc
    finally:
        if written:
            _delete_quietly(client, profile.bucket, key)


def probe_directory(path: str) -> None:
    """Create the directory if missing, then write, read back and delete a probe file in it.

    Raises:
        StorageAccessError: the directory cannot be created or used.
    """
    probe = Path(path) / f".catalog-es-probe-{uuid.uuid4().hex}"
    try:
        probe.parent.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(_PROBE_BODY)
        try:
            if probe.read_bytes() != _PROBE_BODY:
                raise StorageAccessError(f"Storage access check failed for directory {path}: read back other bytes")
        finally:
            probe.unlink()
    except OSError as exc:
        raise StorageAccessError(
            f"Storage access check failed for directory {path}: {exc.strerror or exc} ({type(exc).__name__})"
        ) from exc


def _delete_quietly(client: Any, bucket: str, key: str) -> None:
    try:
        client.delete_object(Bucket=bucket, Key=key)
    except (BotoCoreError, ClientError):
        return
