"""Which of a client's headers the remote signer signs: an allow-list per S3's SigV4 needs, and refusals.

S3 rejects a request carrying an `x-amz-*` header that is not signed, so refusing to sign one is refusing the
request: a client cannot add `x-amz-copy-source` (read any object the warehouse key can read), ACL grants or a
website redirect to a request that was checked as a plain PUT. `Host` is always the checked URL's.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from catalog_es.errors import ForbiddenError
from catalog_es.storage.profiles import S3Profile

# Headers the signer sets itself: a client's values are dropped (the signature names the URL's host).
SIGNER_HEADERS: Final = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "date", "host"})
# Standard headers signed when sent: they bind the body, its range and the conditions the client asked for.
_SIGNED: Final = frozenset(
    {"content-length", "content-type", "content-md5", "content-encoding", "range"}
    | {"if-match", "if-none-match", "if-modified-since", "if-unmodified-since"}
)
# `x-amz-*` headers that only describe the body or the caller's expectations (checksums, streaming, owner).
_AMZ_SIGNED: Final = frozenset(
    {"x-amz-content-sha256", "x-amz-sdk-checksum-algorithm", "x-amz-trailer", "x-amz-decoded-content-length"}
    | {"x-amz-expected-bucket-owner", "x-amz-server-side-encryption-bucket-key-enabled"}
)
_AMZ_CHECKSUM: Final = "x-amz-checksum-"
_SSE: Final = "x-amz-server-side-encryption"
_SSE_KMS_KEY: Final = "x-amz-server-side-encryption-aws-kms-key-id"


def signed_headers(profile: S3Profile, uri: str, headers: dict[str, list[str]]) -> dict[str, list[str]]:
    """The client's headers that go into the signature, as sent.

    Other standard headers (`User-Agent`, `Expect`, SDK bookkeeping) are left out of the signature; S3 ignores
    them for authorization and they change nothing it does with the object.

    Raises:
        ForbiddenError: a `Host` other than the URL's; an `x-amz-*` header outside the allow-list (copy source,
            metadata or tagging directives, ACLs and grants, object lock, website redirect, SSE with a customer
            key); server-side encryption other than the bucket's default or the profile's KMS key.
    """
    kept: dict[str, list[str]] = {}
    for name, values in headers.items():
        lower = name.lower()
        if lower == "host":
            _check_host(uri, values)
        elif lower in SIGNER_HEADERS:
            continue
        elif lower in _SIGNED or lower in _AMZ_SIGNED or lower.startswith(_AMZ_CHECKSUM):
            kept[name] = values
        elif lower in (_SSE, _SSE_KMS_KEY):
            _check_encryption(profile, lower, values)
            kept[name] = values
        elif lower.startswith("x-amz-"):
            raise ForbiddenError(f"Requests with header {name!r} are not signed")
    return kept


def _check_host(uri: str, values: list[str]) -> None:
    parts = urlsplit(uri)
    accepted = {parts.netloc.lower()}
    if parts.port in (None, {"http": 80, "https": 443}.get(parts.scheme)):
        accepted.add((parts.hostname or "").lower())  # a default port may be left out
    if len(values) != 1 or values[0].strip().lower() not in accepted:
        raise ForbiddenError("The Host header names another host than the request URL")


def _check_encryption(profile: S3Profile, name: str, values: list[str]) -> None:
    value = ", ".join(values)
    if name == _SSE_KMS_KEY:
        if profile.aws_kms_key_arn is None or value != profile.aws_kms_key_arn:
            raise ForbiddenError("Only the warehouse's KMS key may be named for server-side encryption")
    elif value != "AES256" and not (profile.aws_kms_key_arn is not None and value in ("aws:kms", "aws:kms:dsse")):
        raise ForbiddenError(f"Server-side encryption {value!r} is not signed for this warehouse")
