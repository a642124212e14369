"""The S3 backend (AWS and S3-compatible stores): boto3 and pyarrow IO, STS vending, remote signing."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError
from pyiceberg.io import FileIO, load_file_io

from catalog_es.errors import ForbiddenError, StorageAccessError
from catalog_es.locations import normalize_location
from catalog_es.storage.access_delegation import DelegationMode, vends_credentials
from catalog_es.storage.backends.base import ForeignLocationError, Store, VendedConfig, flag, setup_digest
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile, location_schemes, path_style
from catalog_es.storage.s3 import describe, probe_bucket, reason, s3_client, safe_code
from catalog_es.storage.session_policy import AccessLevel, session_policy
from catalog_es.storage.sign_scope import S3Request, inside, request_scope
from catalog_es.storage.signer import sign_request
from catalog_es.storage.signing import Scope, SignRequest
from catalog_es.storage.sts import assume_role, sts_client

_DELETE_BATCH = 1000  # the most keys one DeleteObjects request takes
# pyarrow's S3 errors read "AWS Error ACCESS_DENIED during PutObject operation: <the endpoint's message>":
# the SDK's own error name is safe to show, the rest is the endpoint's text.
_AWS_SDK_ERROR: Final = re.compile(r"AWS Error (\[code \d+\]|[A-Z_]+)")


def s3_fileio_properties(profile: S3Profile, credential: S3AccessKeyCredential | None) -> dict[str, str]:
    """pyiceberg FileIO properties for the catalog's own IO on S3."""
    properties = {
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
        "s3.region": profile.region,
        # pyarrow names the bucket in the path for a custom endpoint unless virtual addressing is forced.
        "s3.force-virtual-addressing": flag(not path_style(profile)),
        "s3.connect-timeout": "10",
        "s3.request-timeout": "60",
    }
    if profile.endpoint:
        properties["s3.endpoint"] = profile.endpoint
    if credential is not None:
        properties["s3.access-key-id"] = credential.access_key_id
        properties["s3.secret-access-key"] = credential.secret_access_key
    return properties


def s3_client_config(profile: S3Profile, credential: S3AccessKeyCredential | None) -> dict[str, str]:
    """The `config` a loadTable/createTable response gives clients (pyiceberg's and Java S3FileIO's keys).

    Static keys are included only when the profile says `share-static-credentials-with-clients`.
    """
    config = {
        "s3.region": profile.region,
        "client.region": profile.region,
        "s3.path-style-access": flag(path_style(profile)),
        "s3.force-virtual-addressing": flag(not path_style(profile)),
        "s3.remote-signing-enabled": flag(profile.remote_signing_enabled),
    }
    if profile.endpoint:
        config["s3.endpoint"] = profile.endpoint
    if profile.push_s3_delete_disabled:
        config["s3.delete-enabled"] = "false"
    if credential is not None and profile.share_static_credentials_with_clients:
        config["s3.access-key-id"] = credential.access_key_id
        config["s3.secret-access-key"] = credential.secret_access_key
    return config


class S3Signer:
    """Signs clients' S3 requests with the warehouse's access key, after checking what they touch."""

    def __init__(self, profile: S3Profile, credential: S3AccessKeyCredential) -> None:
        self._profile, self._credential = profile, credential

    def scope(self, request: SignRequest) -> Scope:
        return request_scope(self._profile, S3Request(request.method, request.uri, request.body))

    def covers(self, scope: Scope, table_location: str) -> bool:
        return inside(scope, table_location)

    def sign(self, request: SignRequest, scope: Scope) -> dict[str, list[str]]:
        if request.region != self._profile.region:
            raise ForbiddenError(f"The request is for region {request.region!r}, the warehouse's storage is in another")
        # A write's body (DeleteObjects: the keys the scope was read from) is bound by its hash.
        body = request.body if scope.privilege == "modify" and request.method.upper() == "POST" else None
        return sign_request(self._credential, self._profile, request.method, request.uri, request.headers, body)


class S3Backend:
    """An S3 bucket under an optional key prefix. Without a credential every request is unsigned: never the
    SDKs' default chain (ambient keys, instance metadata)."""

    store: Store = "s3"

    def __init__(self, profile: S3Profile, credential: S3AccessKeyCredential | None, endpoints: EndpointPolicy) -> None:
        self._profile, self._credential, self._endpoints = profile, credential, endpoints
        self.setup = setup_digest(profile, credential)
        self.signer = S3Signer(profile, credential) if profile.remote_signing_enabled and credential else None
        self._io: FileIO | None = None
        self._client: Any = None
        self._sts: Any = None  # building an STS client costs more than a call

    def describe(self) -> str:
        return describe(self._profile)

    def check_own(self, location: str, canonical: str) -> None:
        parts = urlsplit(canonical)
        if parts.scheme not in location_schemes(self._profile) or parts.netloc != self._profile.bucket:
            raise ForeignLocationError(
                f"Location {location} is not in this warehouse's storage (bucket {self._profile.bucket!r})"
            )

    def file_io(self, location: str) -> FileIO:
        if self._io is None:
            self._endpoints.check(self._profile.endpoint)
            properties = s3_fileio_properties(self._profile, self._credential)
            if self._credential is None:  # never pyarrow's default chain: unsigned requests
                properties = {**properties, "s3.anonymous": "true"}
            self._io = load_file_io(properties, location)
        return self._io

    def delete_file(self, location: str) -> None:
        """Through boto3: pyarrow would leave a directory marker in the file's place."""
        bucket, key = _bucket_key(normalize_location(location))
        try:
            self._s3().delete_object(Bucket=bucket, Key=key)
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("delete", location, exc) from exc

    def is_empty(self, location: str) -> bool:
        client, (bucket, key) = self._s3(), _bucket_key(location)
        try:
            below = client.list_objects_v2(Bucket=bucket, Prefix=f"{key}/", MaxKeys=1)
            if below.get("KeyCount", 0) > 0:
                return False
            exact = client.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("list", location, exc) from exc
        return not any(item["Key"] == key for item in exact.get("Contents", []))

    def files_below(self, location: str) -> list[str]:
        client, (bucket, key) = self._s3(), _bucket_key(location)
        try:
            pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{key}/")
            return [item["Key"].removeprefix(f"{key}/") for page in pages for item in page.get("Contents", [])]
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("list", location, exc) from exc

    def purge(self, location: str) -> None:
        client, (bucket, key) = self._s3(), _bucket_key(location)
        try:
            keys = [key] if key else []
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{key}/"):
                keys.extend(item["Key"] for item in page.get("Contents", []))
            for start in range(0, len(keys), _DELETE_BATCH):
                batch = [{"Key": name} for name in keys[start : start + _DELETE_BATCH]]
                answer = client.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
                if answer.get("Errors"):
                    error = answer["Errors"][0]
                    raise StorageAccessError(
                        f"Cannot purge {location} in {self.describe()}: "
                        f"{safe_code(error.get('Code'))} ({len(answer['Errors'])} keys failed)"
                    )
        except (BotoCoreError, ClientError) as exc:
            raise self._failure("purge", location, exc) from exc

    def probe(self) -> None:
        """Both endpoints must pass the outbound policy first (the STS one too, though a probe does not call it):
        a stored profile should not name a host the server may not contact."""
        self._endpoints.check(self._profile.sts_endpoint)
        probe_bucket(self._profile, self._credential, self._endpoints)

    def failure_reason(self, location: str, exc: OSError) -> str:
        reason(exc, location)  # logs the details
        found = _AWS_SDK_ERROR.search(str(exc))
        return f"storage error in {self.describe()}" + (f" ({found.group(1)})" if found else "")

    def client_config(self) -> dict[str, str]:
        return s3_client_config(self._profile, self._credential)

    def vends(self, modes: frozenset[DelegationMode]) -> bool:
        return vends_credentials(modes, self._profile)

    def vending(self, location: str, level: AccessLevel, principal_id: str) -> Callable[[], VendedConfig]:
        """STS AssumeRole with a session policy for `level` on the objects under `location`."""
        policy = session_policy(location, level, self._profile.region, self._profile.aws_kms_key_arn)

        def call() -> VendedConfig:
            if self._sts is None:
                self._sts = sts_client(self._profile, self._credential, self._endpoints)
            vended = assume_role(self._sts, self._profile, self._credential, policy, principal_id)
            config = {
                "s3.access-key-id": vended.access_key_id,
                "s3.secret-access-key": vended.secret_access_key,
                "s3.session-token": vended.session_token,
                "s3.session-token-expires-at-ms": str(vended.expires_at_ms()),
            }
            return VendedConfig(config, vended.expires_at)

        return call

    def _s3(self) -> Any:
        if self._client is None:
            self._client = s3_client(self._profile, self._credential, self._endpoints)
        return self._client

    def _failure(self, action: str, location: str, exc: Exception) -> StorageAccessError:
        return StorageAccessError(f"Cannot {action} {location} in {self.describe()}: {reason(exc, location)}")


def _bucket_key(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    return parts.netloc, parts.path.strip("/")
