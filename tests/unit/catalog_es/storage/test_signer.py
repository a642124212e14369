"""SigV4 signing of a client's request: the same signature botocore's own client computes, new headers only."""

from __future__ import annotations

import hashlib

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from catalog_es.errors import ForbiddenError
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile
from catalog_es.storage.signer import sign_request

KEY = S3AccessKeyCredential(credential_type="access-key", access_key_id="AKID", secret_access_key="SECRET")
URI = "http://127.0.0.1:9000/lake/wh/ns/t/data/f%20g.parquet"
EU = S3Profile(bucket="lake", region="eu-west-1", endpoint="http://127.0.0.1:9000")
US = S3Profile(bucket="lake", region="us-east-1", endpoint="http://127.0.0.1:9000")


def test_signature_matches_botocores_for_the_same_request_and_only_new_headers_come_back() -> None:
    headers = {"Content-Length": ["3"], "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"], "User-Agent": ["x"]}
    signed = sign_request(KEY, EU, "PUT", URI, headers)
    assert set(signed) == {"Authorization", "X-Amz-Date"}
    assert "SECRET" not in str(signed)

    # Rebuild the request as the client sends it and let botocore verify the signature independently.
    reference = AWSRequest(
        method="PUT",
        url=URI,
        headers={"Content-Length": "3", "X-Amz-Date": signed["X-Amz-Date"][0], "User-Agent": "x"},
    )
    reference.headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD"
    auth = S3SigV4Auth(Credentials("AKID", "SECRET"), "s3", "eu-west-1")
    reference.context["timestamp"] = signed["X-Amz-Date"][0]
    canonical = auth.canonical_request(reference)
    expected = auth.signature(auth.string_to_sign(reference, canonical), reference)
    assert signed["Authorization"][0].endswith(f"Signature={expected}")
    assert "SignedHeaders=content-length;host;x-amz-content-sha256;x-amz-date" in signed["Authorization"][0]


def test_without_a_payload_hash_the_request_is_signed_unsigned_payload() -> None:
    signed = sign_request(KEY, US, "GET", URI, {})
    assert signed["X-Amz-Content-SHA256"] == ["UNSIGNED-PAYLOAD"]


def test_a_checked_body_is_bound_by_its_hash() -> None:
    body = "<Delete><Object><Key>wh/ns/t/a</Key></Object></Delete>"
    signed = sign_request(KEY, US, "POST", "http://127.0.0.1:9000/lake?delete", {}, body)
    assert signed["X-Amz-Content-SHA256"] == [hashlib.sha256(body.encode()).hexdigest()]
    with pytest.raises(ForbiddenError):
        sign_request(KEY, US, "POST", "http://127.0.0.1:9000/lake?delete", {"x-amz-content-sha256": ["0" * 64]}, body)


@pytest.mark.parametrize(
    "header",
    [
        {"x-amz-copy-source": ["lake/wh/other/t/data/secret.parquet"]},
        {"X-Amz-Copy-Source-Range": ["bytes=0-10"]},
        {"x-amz-metadata-directive": ["REPLACE"]},
        {"x-amz-tagging-directive": ["REPLACE"]},
        {"x-amz-acl": ["public-read"]},
        {"x-amz-grant-read": ["uri=http://acs.amazonaws.com/groups/global/AllUsers"]},
        {"x-amz-website-redirect-location": ["https://example.invalid/"]},
        {"x-amz-object-lock-mode": ["COMPLIANCE"]},
        {"x-amz-server-side-encryption-customer-algorithm": ["AES256"]},
        {"x-amz-server-side-encryption": ["aws:kms"]},
        {"x-amz-server-side-encryption-aws-kms-key-id": ["arn:aws:kms:eu-west-1:1:key/other"]},
        {"Host": ["other-bucket.127.0.0.1:9000"]},
        {"host": ["127.0.0.1:9000", "127.0.0.1:9000"]},
    ],
)
def test_headers_that_change_what_s3_does_are_refused_when_the_client_sends_them(header: dict[str, list[str]]) -> None:
    with pytest.raises(ForbiddenError):
        sign_request(KEY, EU, "PUT", URI, {"x-amz-content-sha256": ["UNSIGNED-PAYLOAD"], **header})


def test_the_signature_names_the_urls_host_and_only_the_allowed_headers() -> None:
    headers = {
        "Host": ["127.0.0.1:9000"],
        "Content-Type": ["application/octet-stream"],
        "x-amz-checksum-crc32": ["AAAAAA=="],
        "x-amz-sdk-checksum-algorithm": ["CRC32"],
        "User-Agent": ["pyiceberg"],
        "amz-sdk-invocation-id": ["1"],
        "Expect": ["100-continue"],
    }
    signed = sign_request(KEY, EU, "PUT", URI, headers)
    assert "Host" not in signed
    assert (
        "SignedHeaders=content-type;host;x-amz-checksum-crc32;x-amz-content-sha256;x-amz-date;"
        "x-amz-sdk-checksum-algorithm," in signed["Authorization"][0]
    )


def test_only_the_profiles_kms_key_is_signed_for_server_side_encryption() -> None:
    key = "arn:aws:kms:eu-west-1:111122223333:key/warehouse"
    kms = S3Profile(bucket="lake", region="eu-west-1", endpoint="http://127.0.0.1:9000", aws_kms_key_arn=key)
    headers = {"x-amz-server-side-encryption": ["aws:kms"], "x-amz-server-side-encryption-aws-kms-key-id": [key]}
    assert "x-amz-server-side-encryption" in sign_request(KEY, kms, "PUT", URI, headers)["Authorization"][0]
    assert sign_request(KEY, EU, "PUT", URI, {"x-amz-server-side-encryption": ["AES256"]})
