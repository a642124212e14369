"""The S3 endpoint policy: AWS's own endpoints by default, the operator's allow-list, metadata addresses never."""

from __future__ import annotations

from urllib.parse import urlsplit

import msgspec
import pytest

from api.settings import load_settings
from catalog_es.errors import BadRequestError
from catalog_es.storage.outbound import EndpointNotAllowedError, EndpointPolicy


def _resolver(answer: list[str]) -> object:
    def resolve(host: str, port: int) -> list[str]:
        return answer

    return resolve


def _policy(*hosts: str, resolves_to: tuple[str, ...] = ("192.0.2.10",)) -> EndpointPolicy:
    return EndpointPolicy(allowed_hosts=hosts, resolve=_resolver(list(resolves_to)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "endpoint",
    [
        None,
        "https://s3.eu-west-1.amazonaws.com",
        "https://s3-fips.dualstack.us-east-1.amazonaws.com",
        "https://s3.amazonaws.com",
        "https://sts.cn-north-1.amazonaws.com.cn",
    ],
)
def test_default_policy_allows_only_aws_endpoints_when_nothing_is_listed(endpoint: str | None) -> None:
    _policy().check(endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:9000",
        "http://localhost:9000",
        "http://10.0.0.5",
        "https://minio.internal",
        "https://ec2-3-4-5-6.compute-1.amazonaws.com",  # an EC2 host, not an AWS service endpoint
        "https://s3.amazonaws.com.evil.example",
    ],
)
def test_default_policy_refuses_other_hosts_naming_the_setting(endpoint: str) -> None:
    with pytest.raises(EndpointNotAllowedError, match="CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS") as raised:
        _policy().check(endpoint)
    assert isinstance(raised.value, BadRequestError)  # answered 400


def test_listed_hosts_and_wildcard_subdomains_are_allowed_when_configured() -> None:
    policy = EndpointPolicy.from_setting(" 127.0.0.1, MinIO.Internal. ,*.storage.example,, ::1")
    assert policy.allowed_hosts == ("127.0.0.1", "minio.internal", "*.storage.example", "::1")
    checked = _policy(*policy.allowed_hosts)
    for endpoint in (
        "http://127.0.0.1:9000",
        "https://minio.internal",
        "https://a.b.storage.example",
        "http://[::1]:1",
    ):
        checked.check(endpoint)
    with pytest.raises(EndpointNotAllowedError):
        checked.check("https://storage.example")  # the wildcard covers subdomains only


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://169.254.169.254",
        "http://169.254.3.4:9000",
        "http://[fe80::1]",
        "http://[fd00:ec2::254]",
        "http://100.100.100.200",
        "http://[::ffff:169.254.169.254]",
        "http://[64:ff9b::a9fe:a9fe]",  # NAT64 spelling of 169.254.169.254
        "http://metadata.google.internal",
        "http://METADATA.google.internal.",
        "http://0.0.0.0:9000",
    ],
)
def test_metadata_and_link_local_addresses_are_refused_even_when_listed(endpoint: str) -> None:
    listed = str(urlsplit(endpoint).hostname).rstrip(".")
    with pytest.raises(EndpointNotAllowedError, match="link-local and cloud metadata"):
        _policy(listed, "169.254.169.254").check(endpoint)


@pytest.mark.parametrize("answer", [("169.254.169.254",), ("192.0.2.1", "fe80::1%eth0"), ("fd00:ec2::254",)])
def test_an_allowed_name_is_refused_when_it_resolves_to_a_metadata_address(answer: tuple[str, ...]) -> None:
    with pytest.raises(EndpointNotAllowedError, match="resolves to a link-local or metadata address"):
        _policy("s3.internal", resolves_to=answer).check("http://s3.internal:9000")


def test_an_allowed_name_is_refused_when_it_does_not_resolve() -> None:
    def fail(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    with pytest.raises(EndpointNotAllowedError, match="does not resolve"):
        EndpointPolicy(allowed_hosts=("s3.internal",), resolve=fail).check("http://s3.internal")


@pytest.mark.parametrize("endpoint", ["ftp://127.0.0.1", "http://user:pw@127.0.0.1", "http://127.0.0.1:99999", "x"])
def test_malformed_endpoints_are_refused(endpoint: str) -> None:
    with pytest.raises(EndpointNotAllowedError, match="expected http"):
        _policy("127.0.0.1").check(endpoint)


def test_settings_refuse_an_allow_list_entry_that_is_no_host() -> None:
    assert load_settings({}).endpoint_policy.allowed_hosts == ()
    assert load_settings({"CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS": "127.0.0.1"}).endpoint_policy.allowed_hosts == (
        "127.0.0.1",
    )
    with pytest.raises(msgspec.ValidationError, match="not a host name"):
        load_settings({"CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS": "http://minio:9000/"})
