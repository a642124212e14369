"""STS vending against moto with IAM enforcement: what vended keys may and may not do in the bucket."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from catalog_es.errors import StorageAccessError
from catalog_es.storage.backends import StorageBackend, backend_for
from catalog_es.storage.outbound import EndpointNotAllowedError, EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile
from catalog_es.storage.session_policy import AccessLevel
from catalog_es.storage.vendor import CredentialVendor
from tests.integration.s3_server import REGION, IamStore, s3_iam  # noqa: F401 - the IAM-enforcing fixture

LOOPBACK = EndpointPolicy.from_setting("127.0.0.1")
SPECIAL = "ns/tab le*?$'+\"x"


def _profile(store: IamStore, bucket: str) -> S3Profile:
    return S3Profile(
        bucket=bucket,
        region=REGION,
        endpoint=store.endpoint,
        path_style_access=True,
        sts_enabled=True,
        sts_role_arn=store.role_arn,
        sts_token_validity_seconds=900,
    )


def _credential(store: IamStore) -> S3AccessKeyCredential:
    access_key_id, secret = store.warehouse
    return S3AccessKeyCredential(credential_type="access-key", access_key_id=access_key_id, secret_access_key=secret)


@pytest.fixture(scope="module")
def bucket(s3_iam: IamStore) -> str:  # noqa: F811
    name = f"vend-{uuid.uuid4().hex[:12]}"
    s3_iam.s3(s3_iam.admin).create_bucket(Bucket=name)
    return name


def _backend(
    store: IamStore, bucket: str, credential: S3AccessKeyCredential | None = None, policy: EndpointPolicy = LOOPBACK
) -> StorageBackend:
    return backend_for(_profile(store, bucket), credential or _credential(store), policy)


def _vend(store: IamStore, bucket: str, key: str, level: AccessLevel, vendor: CredentialVendor | None = None) -> Any:
    vendor = vendor or CredentialVendor()
    location = f"s3://{bucket}/{key}"
    vended = asyncio.run(vendor.vend(_backend(store, bucket), location, level, "oidc~alice"))
    return store.s3((vended["s3.access-key-id"], vended["s3.secret-access-key"]), vended["s3.session-token"])


def _denied(call: Any) -> None:
    with pytest.raises(ClientError) as caught:
        call()
    assert caught.value.response["Error"]["Code"] == "AccessDenied"


def test_read_credentials_read_the_table_and_cannot_put_when_the_caller_may_only_select(
    s3_iam: IamStore,  # noqa: F811
    bucket: str,
) -> None:
    s3_iam.s3(s3_iam.admin).put_object(Bucket=bucket, Key="t1/data/a.parquet", Body=b"rows")
    s3 = _vend(s3_iam, bucket, "t1", "read")
    assert s3.get_object(Bucket=bucket, Key="t1/data/a.parquet")["Body"].read() == b"rows"
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="t1/")
    assert [item["Key"] for item in listed["Contents"]] == ["t1/data/a.parquet"]
    _denied(lambda: s3.put_object(Bucket=bucket, Key="t1/data/b.parquet", Body=b"x"))
    _denied(lambda: s3.delete_object(Bucket=bucket, Key="t1/data/a.parquet"))


def test_read_write_credentials_stay_inside_the_table_location_when_writing_and_listing(
    s3_iam: IamStore,  # noqa: F811
    bucket: str,
) -> None:
    s3_iam.s3(s3_iam.admin).put_object(Bucket=bucket, Key="t2x/other.parquet", Body=b"neighbour")
    s3 = _vend(s3_iam, bucket, "t2", "read-write")
    s3.put_object(Bucket=bucket, Key="t2/data/b.parquet", Body=b"new")
    s3.delete_object(Bucket=bucket, Key="t2/data/b.parquet")
    _denied(lambda: s3.put_object(Bucket=bucket, Key="t2x/evil.parquet", Body=b"x"))
    _denied(lambda: s3.get_object(Bucket=bucket, Key="t2x/other.parquet"))
    _denied(lambda: s3.list_objects_v2(Bucket=bucket, Prefix="t2x/"))
    _denied(lambda: s3.list_objects_v2(Bucket=bucket, Prefix="t2"))  # would list the sibling `t2x`


def test_special_characters_in_the_location_are_literal_when_they_are_iam_wildcards(
    s3_iam: IamStore,  # noqa: F811
    bucket: str,
) -> None:
    s3 = _vend(s3_iam, bucket, SPECIAL, "read-write")
    s3.put_object(Bucket=bucket, Key=f"{SPECIAL}/data/c.parquet", Body=b"ok")
    assert s3.get_object(Bucket=bucket, Key=f"{SPECIAL}/data/c.parquet")["Body"].read() == b"ok"
    # `*`, `?` and `$` in the table's key must not match other keys
    _denied(lambda: s3.put_object(Bucket=bucket, Key="ns/tab leANYTHINGx/data/d.parquet", Body=b"x"))
    _denied(lambda: s3.put_object(Bucket=bucket, Key="ns/tab le*Q$'+\"x/data/d.parquet", Body=b"x"))


def test_concurrent_requests_make_one_sts_call_when_the_credential_is_cached(
    s3_iam: IamStore,  # noqa: F811
    bucket: str,
) -> None:
    vendor, backend = CredentialVendor(), _backend(s3_iam, bucket)

    async def many() -> set[str]:
        vended = await asyncio.gather(
            *(vendor.vend(backend, f"s3://{bucket}/t3", "read", "oidc~bob") for _ in range(20))
        )
        return {v["s3.access-key-id"] for v in vended}

    assert len(asyncio.run(many())) == 1
    assert vendor.cache.issued == 1


def test_sts_refuses_when_the_warehouse_keys_are_unknown(s3_iam: IamStore, bucket: str) -> None:  # noqa: F811
    wrong = S3AccessKeyCredential(credential_type="access-key", access_key_id="AKIAUNKNOWN", secret_access_key="no")
    vendor = CredentialVendor()
    with pytest.raises(StorageAccessError, match="STS AssumeRole failed"):
        asyncio.run(vendor.vend(_backend(s3_iam, bucket, wrong), f"s3://{bucket}/t4", "read", "anonymous"))
    assert len(vendor.cache) == 0


def test_the_sts_endpoint_is_refused_when_the_outbound_policy_does_not_allow_it(
    s3_iam: IamStore,  # noqa: F811
    bucket: str,
) -> None:
    backend = _backend(s3_iam, bucket, policy=EndpointPolicy())  # no allowed hosts: loopback refused before connecting
    with pytest.raises(EndpointNotAllowedError):
        asyncio.run(CredentialVendor().vend(backend, f"s3://{bucket}/t5", "read", "x"))
