"""ADLS and GCS storage contact only allowed endpoints: metadata and unlisted hosts are refused before any
connection, and Azure's and Google's own public endpoints need no entry."""

from __future__ import annotations

import pytest

from catalog_es.storage.backends import validate_access
from catalog_es.storage.outbound import EndpointNotAllowedError, EndpointPolicy
from catalog_es.storage.profiles import decode_credential, decode_profile

AZURE_KEY = {"type": "az", "credential-type": "shared-access-key", "key": "a2V5"}
GOOGLE = {"type": "gcs", "credential-type": "gcp-system-identity"}


def refuse_resolving(host: str, port: int) -> list[str]:
    raise AssertionError(f"no name may be resolved here ({host}:{port})")


@pytest.mark.parametrize(
    ("profile", "credential"),
    [
        (
            {"type": "adls", "account-name": "acct", "filesystem": "lake", "endpoint": "http://169.254.169.254/acct"},
            AZURE_KEY,
        ),
        (
            {"type": "adls", "account-name": "acct", "filesystem": "lake", "endpoint": "http://[fd00:ec2::254]/a"},
            AZURE_KEY,
        ),
        ({"type": "gcs", "bucket": "lake", "endpoint": "http://169.254.169.254"}, GOOGLE),
        ({"type": "gcs", "bucket": "lake", "endpoint": "http://metadata.google.internal"}, GOOGLE),
    ],
)
def test_metadata_endpoints_are_refused_before_any_connection_whatever_the_allow_list(profile, credential):
    policy = EndpointPolicy(allowed_hosts=("169.254.169.254", "metadata.google.internal", "fd00:ec2::254"))
    with pytest.raises(EndpointNotAllowedError):
        validate_access(decode_profile(profile), decode_credential(credential), policy)


@pytest.mark.parametrize(
    "profile",
    [
        {"type": "adls", "account-name": "acct", "filesystem": "lake", "endpoint": "http://storage.internal/acct"},
        {"type": "adls", "account-name": "acct", "filesystem": "lake", "host": "dfs.internal.example"},
        {"type": "adls", "account-name": "acct", "filesystem": "lake", "authority-host": "https://login.internal"},
        {"type": "gcs", "bucket": "lake", "endpoint": "http://storage.internal"},
    ],
)
def test_hosts_outside_the_allow_list_are_refused_without_resolving_them(profile):
    credential = decode_credential(AZURE_KEY if profile["type"] == "adls" else GOOGLE)
    with pytest.raises(EndpointNotAllowedError, match="not in"):
        validate_access(decode_profile(profile), credential, EndpointPolicy(resolve=refuse_resolving))
