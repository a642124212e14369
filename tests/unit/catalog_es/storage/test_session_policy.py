"""The session policy of vended S3 credentials, the access-delegation header and the credential cache."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from catalog_es.errors import InvalidLocationError
from catalog_es.storage.access_delegation import parse_access_delegation, vends_credentials
from catalog_es.storage.credential_cache import CredentialCache
from catalog_es.storage.profiles import FileProfile, S3Profile
from catalog_es.storage.session_policy import bucket_and_key, escape_iam, partition_of, session_policy
from catalog_es.storage.sts import VendedCredential, session_name


def _statements(policy: str) -> dict[str, dict[str, Any]]:
    return {statement["Sid"]: statement for statement in json.loads(policy)["Statement"]}


def test_read_policy_allows_only_reads_under_the_table_when_the_caller_may_select() -> None:
    statements = _statements(session_policy("s3://bucket/wh/t1", "read", "eu-west-1"))
    assert statements["TableAccess"]["Action"] == ["s3:GetObject", "s3:GetObjectVersion"]
    assert statements["TableAccess"]["Resource"] == ["arn:aws:s3:::bucket/wh/t1/*"]
    assert statements["ListBucketForFolder"]["Resource"] == ["arn:aws:s3:::bucket"]
    assert statements["ListBucketForFolder"]["Condition"] == {"StringLike": {"s3:prefix": ["wh/t1/*"]}}
    assert "KmsAccess" not in statements


def test_read_write_policy_adds_put_delete_and_multipart_when_the_caller_may_modify() -> None:
    actions = _statements(session_policy("s3://bucket/t1/", "read-write", "us-east-1"))["TableAccess"]["Action"]
    assert {"s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"} <= set(actions)


@pytest.mark.parametrize(
    ("key", "escaped"),
    [
        ("a*b", "a${*}b"),
        ("a?b", "a${?}b"),
        ("a$b", "a${$}b"),
        ("${*}", "${$}{${*}}"),
        ('it\'s a "+" name', 'it\'s a "+" name'),
    ],
)
def test_iam_wildcards_are_escaped_when_they_appear_in_a_location(key: str, escaped: str) -> None:
    assert escape_iam(key) == escaped


def test_special_characters_reach_resource_and_prefix_condition_escaped_when_in_the_table_key() -> None:
    statements = _statements(session_policy("s3://bucket/ns/tab le*?$'+\"x", "read", "us-east-1"))
    assert statements["TableAccess"]["Resource"] == ["arn:aws:s3:::bucket/ns/tab le${*}${?}${$}'+\"x/*"]
    assert statements["ListBucketForFolder"]["Condition"]["StringLike"]["s3:prefix"] == ["ns/tab le${*}${?}${$}'+\"x/*"]


@pytest.mark.parametrize(
    ("region", "partition"),
    [("us-east-1", "aws"), ("cn-north-1", "aws-cn"), ("us-gov-west-1", "aws-us-gov"), ("eu-central-2", "aws")],
)
def test_arns_name_the_region_partition_when_the_bucket_is_in_china_or_govcloud(region: str, partition: str) -> None:
    assert partition_of(region) == partition
    statements = _statements(session_policy("s3://b1/t", "read", region))
    assert statements["GetBucketLocation"]["Resource"] == [f"arn:{partition}:s3:::b1"]


def test_access_point_arns_scope_objects_under_object_when_the_location_names_an_access_point() -> None:
    arn = "arn:aws-cn:s3:cn-north-1:123456789012:accesspoint/lake"
    statements = _statements(session_policy(f"s3://{arn}/wh/t1", "read", "cn-north-1"))
    assert statements["TableAccess"]["Resource"] == [f"{arn}/object/wh/t1/*"]
    assert statements["ListBucketForFolder"]["Resource"] == [arn]


def test_keys_keep_question_marks_and_hashes_when_a_url_parser_would_cut_them() -> None:
    assert bucket_and_key("s3://b/x?y#z/") == ("b", "x?y#z")
    assert bucket_and_key("s3a://b/k") == ("b", "k")


def test_non_s3_locations_are_refused_when_a_policy_is_asked_for() -> None:
    with pytest.raises(InvalidLocationError):
        session_policy("file:///tmp/t", "read", "us-east-1")


def test_a_kms_key_is_added_when_the_profile_names_one() -> None:
    statements = _statements(session_policy("s3://b/t", "read-write", "us-east-1", "arn:aws:kms:us-east-1:1:key/k"))
    assert statements["KmsAccess"]["Resource"] == ["arn:aws:kms:us-east-1:1:key/k"]


def test_the_session_name_is_sts_safe_when_the_principal_has_other_characters() -> None:
    assert session_name("oidc~alice/x y") == "catalog-es-oidc-alice-x-y"
    assert len(session_name("u" * 200)) == 64


def test_delegation_modes_are_parsed_case_insensitively_when_comma_separated() -> None:
    assert parse_access_delegation(" Vended-Credentials , remote-signing,unknown") == {
        "vended-credentials",
        "remote-signing",
    }
    assert parse_access_delegation(None) == frozenset()


def test_credentials_are_vended_only_when_asked_and_sts_is_on() -> None:
    sts = S3Profile(bucket="bucket", region="us-east-1", sts_enabled=True)
    assert vends_credentials(parse_access_delegation("vended-credentials"), sts)
    assert not vends_credentials(parse_access_delegation("remote-signing"), sts)
    assert not vends_credentials(parse_access_delegation("vended-credentials,client-managed"), sts)
    no_sts = S3Profile(bucket="bucket", region="us-east-1")
    assert not vends_credentials(parse_access_delegation("vended-credentials"), no_sts)
    assert not vends_credentials(parse_access_delegation("vended-credentials"), FileProfile(location="/x"))


def _credential(expires: float, name: str = "k") -> VendedCredential:
    return VendedCredential(name, "secret", "token", datetime.fromtimestamp(expires, UTC))


def test_the_secret_is_not_in_the_repr_when_a_credential_is_logged() -> None:
    text = repr(_credential(2000.0))
    assert "secret" not in text
    assert "token" not in text


def test_a_cached_credential_is_reissued_when_less_than_a_quarter_of_its_validity_is_left() -> None:
    now = [1000.0]
    cache = CredentialCache(clock=lambda: now[0])
    issued: list[str] = []

    async def issue() -> VendedCredential:
        issued.append(f"k{len(issued)}")
        return _credential(now[0] + 400, issued[-1])

    async def get() -> str:
        return (await cache.get("key", issue)).access_key_id

    assert asyncio.run(get()) == "k0"
    now[0] = 1299.0  # 101 s of 400 left
    assert asyncio.run(get()) == "k0"
    now[0] = 1301.0  # 99 s left: due
    assert asyncio.run(get()) == "k1"
    assert cache.issued == 2


def test_concurrent_misses_share_one_issue_when_the_key_is_the_same() -> None:
    cache = CredentialCache(clock=lambda: 0.0)
    calls = 0

    async def issue() -> VendedCredential:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        return _credential(3600.0)

    async def run() -> None:
        await asyncio.gather(*(cache.get("key", issue) for _ in range(50)), cache.get("other", issue))

    asyncio.run(run())
    assert calls == 2


def test_a_failed_issue_reaches_every_waiter_and_is_not_cached_when_sts_fails() -> None:
    cache = CredentialCache(clock=lambda: 0.0)

    async def fail() -> VendedCredential:
        await asyncio.sleep(0.01)
        raise RuntimeError("sts down")

    async def run() -> list[BaseException | VendedCredential]:
        return await asyncio.gather(*(cache.get("key", fail) for _ in range(3)), return_exceptions=True)

    results = asyncio.run(run())
    assert all(isinstance(result, RuntimeError) for result in results)
    assert len(cache) == 0


def test_the_least_recently_used_key_is_dropped_when_the_cache_is_full() -> None:
    cache = CredentialCache(max_entries=2, clock=lambda: 0.0)

    async def issue() -> VendedCredential:
        return _credential(3600.0)

    async def run() -> None:
        for key in ("a", "b", "a", "c", "a"):
            await cache.get(key, issue)

    asyncio.run(run())
    assert len(cache) == 2
    assert cache.issued == 3  # a, b, c; the last "a" was still kept
