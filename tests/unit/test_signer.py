"""SigV4 signing of a client's request: the same signature botocore's own client computes, new headers only."""

from __future__ import annotations

import hashlib

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from catalog_es.errors import ForbiddenError
from catalog_es.storage.profiles import S3AccessKeyCredential
from catalog_es.storage.signer import sign_request

KEY = S3AccessKeyCredential(credential_type="access-key", access_key_id="AKID", secret_access_key="SECRET")
URI = "http://127.0.0.1:9000/lake/wh/ns/t/data/f%20g.parquet"


def test_signature_matches_botocores_for_the_same_request_and_only_new_headers_come_back() -> None:
    headers = {"Content-Length": ["3"], "x-amz-content-sha256": ["UNSIGNED-PAYLOAD"], "User-Agent": ["x"]}
    signed = sign_request(KEY, "eu-west-1", "PUT", URI, headers)
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
    signed = sign_request(KEY, "us-east-1", "GET", URI, {})
    assert signed["X-Amz-Content-SHA256"] == ["UNSIGNED-PAYLOAD"]


def test_a_checked_body_is_bound_by_its_hash() -> None:
    body = "<Delete><Object><Key>wh/ns/t/a</Key></Object></Delete>"
    signed = sign_request(KEY, "us-east-1", "POST", "http://127.0.0.1:9000/lake?delete", {}, body)
    assert signed["X-Amz-Content-SHA256"] == [hashlib.sha256(body.encode()).hexdigest()]
    with pytest.raises(ForbiddenError):
        sign_request(
            KEY, "us-east-1", "POST", "http://127.0.0.1:9000/lake?delete", {"x-amz-content-sha256": ["0" * 64]}, body
        )
