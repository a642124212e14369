"""STS AssumeRole with the warehouse's own credential: short-lived keys for one table (blocking)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from catalog_es.errors import StorageAccessError
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile
from catalog_es.storage.s3 import reason

# MinIO and other S3-compatible stores take any role ARN (their STS ignores it); AWS needs a real one.
_COMPAT_ROLE: Final = "arn:aws:iam::000000000000:role/catalog-es-vended"
_SESSION_NAME_CHARS: Final = re.compile(r"[^\w+=,.@-]")


@dataclass(frozen=True)
class VendedCredential:
    """Temporary keys from STS; `repr` never shows the secret or the token."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str = field(repr=False)
    expires_at: datetime

    def expires_at_ms(self) -> int:
        return int(self.expires_at.timestamp() * 1000)


def role_arn(profile: S3Profile) -> str:
    """`sts-role-arn`, else `assume-role-arn` (Lakekeeper's order).

    Raises:
        StorageAccessError: neither is set on an AWS profile.
    """
    arn = profile.sts_role_arn or profile.assume_role_arn
    if arn:
        return arn
    if profile.flavor == "s3-compat":
        return _COMPAT_ROLE
    raise StorageAccessError("The warehouse has sts-enabled but no sts-role-arn (or assume-role-arn) to assume")


def session_name(principal_id: str) -> str:
    """`catalog-es-<principal>` within STS's 64 characters of `[\\w+=,.@-]`, so CloudTrail names the caller."""
    return ("catalog-es-" + _SESSION_NAME_CHARS.sub("-", principal_id))[:64]


def sts_client(profile: S3Profile, credential: S3AccessKeyCredential | None, endpoints: EndpointPolicy) -> Any:
    """A boto3 STS client on the profile's STS endpoint (`sts-endpoint`, else its S3 endpoint, else AWS's
    regional one) with the warehouse credential; never boto3's default credential chain. Thread-safe, reusable.

    Raises:
        EndpointNotAllowedError: the STS endpoint is refused by the outbound policy (before any connection).
        StorageAccessError: no warehouse credential.
    """
    if credential is None:
        raise StorageAccessError("Vended credentials need the warehouse's storage credential to call STS")
    endpoint = profile.sts_endpoint or profile.endpoint
    endpoints.check(endpoint)
    config = Config(
        region_name=profile.region,
        connect_timeout=10,
        read_timeout=30,
        retries={"total_max_attempts": 3, "mode": "standard"},
        ignore_configured_endpoint_urls=True,
    )
    return boto3.session.Session().client(
        "sts",
        endpoint_url=endpoint,
        config=config,
        aws_access_key_id=credential.access_key_id,
        aws_secret_access_key=credential.secret_access_key,
    )


def assume_role(
    client: Any, profile: S3Profile, credential: S3AccessKeyCredential | None, policy: str, principal_id: str
) -> VendedCredential:
    """Call AssumeRole on the profile's role with the session policy, as `catalog-es-<principal>`.

    Raises:
        StorageAccessError: STS refused or could not be reached.
    """
    request: dict[str, Any] = {
        "RoleArn": role_arn(profile),
        "RoleSessionName": session_name(principal_id),
        "Policy": policy,
        "DurationSeconds": profile.sts_token_validity_seconds,
    }
    if credential is not None and credential.external_id:
        request["ExternalId"] = credential.external_id
    if profile.sts_session_tags:
        request["Tags"] = [{"Key": key, "Value": value} for key, value in profile.sts_session_tags.items()]
    try:
        answer = client.assume_role(**request)["Credentials"]
    except (ClientError, BotoCoreError) as exc:
        raise StorageAccessError(f"STS AssumeRole failed: {reason(exc, 'sts')}") from None
    return VendedCredential(
        access_key_id=answer["AccessKeyId"],
        secret_access_key=answer["SecretAccessKey"],
        session_token=answer["SessionToken"],
        expires_at=answer["Expiration"],
    )
