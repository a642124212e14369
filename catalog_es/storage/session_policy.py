"""The inline session policy that scopes vended S3 credentials to one table location (pure)."""

from __future__ import annotations

import json
from typing import Final, Literal

from catalog_es.errors import InvalidLocationError

AccessLevel = Literal["read", "read-write"]

# HeadObject is authorized by s3:GetObject; multipart uploads by PutObject, AbortMultipartUpload and
# ListMultipartUploadParts (AWS's S3 authorization reference).
_READ: Final = ("s3:GetObject", "s3:GetObjectVersion")
_READ_WRITE: Final = (
    *_READ,
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:AbortMultipartUpload",
    "s3:ListMultipartUploadParts",
)
# IAM treats `*` and `?` as wildcards and `${...}` as a policy variable in resources and `StringLike`
# values; `${*}`, `${?}` and `${$}` stand for the literal characters.
_IAM_ESCAPES: Final = {"*": "${*}", "?": "${?}", "$": "${$}"}
_S3_SCHEMES: Final = ("s3://", "s3a://", "s3n://")


def partition_of(region: str) -> str:
    """The ARN partition of a region: `aws-cn` for China, `aws-us-gov` for GovCloud, else `aws`."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def escape_iam(text: str) -> str:
    """`text` as a literal inside an IAM resource or `StringLike` pattern (wildcards and `$` escaped)."""
    return "".join(_IAM_ESCAPES.get(char, char) for char in text)


def bucket_and_key(location: str) -> tuple[str, str]:
    """Bucket (or access-point ARN) and key of an `s3://` location, split by hand: a key may hold `?` and `#`,
    which a URL parser would take for a query or a fragment.

    Raises:
        InvalidLocationError: not an S3 location, or no bucket.
    """
    scheme = next((s for s in _S3_SCHEMES if location.startswith(s)), None)
    if scheme is None:
        raise InvalidLocationError(f"Not an S3 location: {location!r}")
    rest = location[len(scheme) :]
    if rest.startswith("arn:"):  # an access point ARN ends with `accesspoint/<name>`; the key follows
        head, marker, tail = rest.partition(":accesspoint/")
        name, _, key = tail.partition("/")
        bucket = f"{head}{marker}{name}"
    else:
        bucket, _, key = rest.partition("/")
    if not bucket or (rest.startswith("arn:") and not marker):
        raise InvalidLocationError(f"S3 location without a bucket: {location!r}")
    return bucket, key.strip("/")


def _arns(bucket: str, region: str) -> tuple[str, str]:
    """The bucket's ARN and the prefix of its objects' ARNs (an access point's objects are under `/object/`)."""
    if bucket.startswith("arn:"):
        return bucket, f"{bucket}/object/"
    bucket_arn = f"arn:{partition_of(region)}:s3:::{bucket}"
    return bucket_arn, f"{bucket_arn}/"


def session_policy(location: str, level: AccessLevel, region: str, kms_key_arn: str | None = None) -> str:
    """The policy document (compact JSON) allowing `level` on the objects under `location` and nothing else.

    Raises:
        InvalidLocationError: not an S3 location.
    """
    bucket, key = bucket_and_key(location)
    bucket_arn, objects_arn = _arns(bucket, region)
    escaped = escape_iam(key)
    statements: list[dict[str, object]] = [
        {
            "Sid": "TableAccess",
            "Effect": "Allow",
            "Action": list(_READ_WRITE if level == "read-write" else _READ),
            "Resource": [f"{objects_arn}{escaped}/*"],
        },
        {
            "Sid": "ListBucketForFolder",
            "Effect": "Allow",
            "Action": ["s3:ListBucket"],
            "Resource": [bucket_arn],
            "Condition": {"StringLike": {"s3:prefix": [f"{escaped}/*"]}},  # `/`: no sibling `<key>x`
        },
        {"Sid": "GetBucketLocation", "Effect": "Allow", "Action": ["s3:GetBucketLocation"], "Resource": [bucket_arn]},
    ]
    if kms_key_arn:
        actions = ["kms:Decrypt", "kms:GenerateDataKey"]
        statements.append({"Sid": "KmsAccess", "Effect": "Allow", "Action": actions, "Resource": [kms_key_arn]})
    return json.dumps({"Version": "2012-10-17", "Statement": statements}, separators=(",", ":"))
