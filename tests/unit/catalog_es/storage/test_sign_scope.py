"""The remote signer's request checks: which objects a URL names, and whether they lie in a table's location."""

from __future__ import annotations

from typing import Any

import pytest

from catalog_es.errors import ForbiddenError
from catalog_es.identifiers import Namespace
from catalog_es.storage.access_delegation import parse_access_delegation
from catalog_es.storage.profiles import S3Profile
from catalog_es.storage.remote_signing import remote_signing_config, signing_applies
from catalog_es.storage.sign_scope import S3Request, inside, privilege_for, request_scope

TABLE = "s3://lake/wh/ns/t"
MOTO = "http://127.0.0.1:9000"


def _profile(**more: Any) -> S3Profile:
    fields: dict[str, Any] = {"bucket": "lake", "region": "eu-west-1", "endpoint": MOTO, **more}
    return S3Profile(**fields)


def _allowed(uri: str, method: str = "GET", body: str | None = None, **profile: Any) -> bool:
    scope = request_scope(_profile(**profile), S3Request(method, uri, body))
    return inside(scope, TABLE)


def test_path_style_object_under_the_table_is_allowed() -> None:
    assert _allowed(f"{MOTO}/lake/wh/ns/t/data/00000-0.parquet")
    assert _allowed(f"{MOTO}/lake/wh/ns/t/metadata/v1.metadata.json?x-id=GetObject", "HEAD")


def test_object_of_another_table_is_refused_when_names_share_a_prefix() -> None:
    assert not _allowed(f"{MOTO}/lake/wh/ns/t2/data/f.parquet")
    assert not _allowed(f"{MOTO}/lake/wh/ns/other/f.parquet", "PUT")


def test_virtual_host_url_names_the_bucket_in_the_host() -> None:
    profile = {"endpoint": "http://s3.local:9000", "remote_signing_url_style": "virtual_host"}
    assert _allowed("http://lake.s3.local:9000/wh/ns/t/data/f.parquet", **profile)
    with pytest.raises(ForbiddenError):  # path style refused when virtual-host is required
        _allowed("http://s3.local:9000/lake/wh/ns/t/data/f.parquet", **profile)


def test_auto_style_reads_both_and_path_style_refuses_virtual_hosts() -> None:
    auto = {"endpoint": "http://s3.local:9000"}
    assert _allowed("http://lake.s3.local:9000/wh/ns/t/f", **auto)
    assert _allowed("http://s3.local:9000/lake/wh/ns/t/f", **auto)
    with pytest.raises(ForbiddenError):
        _allowed(
            "http://lake.s3.local:9000/wh/ns/t/f", endpoint="http://s3.local:9000", remote_signing_url_style="path"
        )


def test_aws_regional_hosts_without_an_endpoint() -> None:
    assert _allowed("https://lake.s3.eu-west-1.amazonaws.com/wh/ns/t/f", endpoint=None)
    assert _allowed("https://s3.eu-west-1.amazonaws.com/lake/wh/ns/t/f", endpoint=None)
    with pytest.raises(ForbiddenError):  # plain http to AWS
        _allowed("http://s3.eu-west-1.amazonaws.com/lake/wh/ns/t/f", endpoint=None)


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.2:9000/lake/wh/ns/t/f",  # another host
        "http://127.0.0.1:9001/lake/wh/ns/t/f",  # another port
        "https://127.0.0.1:9000/lake/wh/ns/t/f",  # another scheme
        "http://evil.127.0.0.1:9000/wh/ns/t/f",  # a subdomain of an IP endpoint names another bucket
        f"{MOTO}/other-bucket/wh/ns/t/f",
        f"{MOTO}/lake/wh/ns/t/../u/f",
        f"{MOTO}/lake/wh/ns/t/%2E%2E/u/f",  # encoded `..`
        f"{MOTO}/lake/wh/ns/t/./f",
        f"{MOTO}/lake/wh/ns/t/a%00b",
        "ftp://127.0.0.1:9000/lake/wh/ns/t/f",
    ],
)
def test_urls_off_the_warehouse_or_with_dot_segments_are_refused(uri: str) -> None:
    with pytest.raises(ForbiddenError):
        _allowed(uri)


def test_percent_encoded_keys_are_compared_decoded() -> None:
    table = "s3://lake/wh/ns/t ?*$'+\"x"
    uri = f"{MOTO}/lake/wh/ns/t%20%3F%2A%24%27%2B%22x/data/f%20g.parquet"
    assert inside(request_scope(_profile(), S3Request("PUT", uri)), table)
    assert not inside(request_scope(_profile(), S3Request("PUT", f"{MOTO}/lake/wh/ns/t%20/f")), table)
    # An encoded slash is a slash in the key: still checked segment by segment.
    assert _allowed(f"{MOTO}/lake/wh%2Fns%2Ft%2Ff")
    assert not _allowed(f"{MOTO}/lake/wh%2Fns%2Fu%2Ff")


def test_listing_with_a_prefix_inside_the_table_is_allowed_and_a_bare_name_prefix_is_not() -> None:
    assert _allowed(f"{MOTO}/lake?list-type=2&prefix=wh%2Fns%2Ft%2Fdata%2F")
    assert _allowed(f"{MOTO}/lake/?list-type=2&prefix=wh/ns/t/")
    assert not _allowed(f"{MOTO}/lake?list-type=2&prefix=wh%2Fns%2Ft")  # would list t2/ too
    assert not _allowed(f"{MOTO}/lake?list-type=2&prefix=wh%2Fns%2F")
    with pytest.raises(ForbiddenError):  # S3 may read '+' as a space: another prefix than the one checked
        _allowed(f"{MOTO}/lake?list-type=2&prefix=wh/ns/t+x/")


def test_other_bucket_requests_are_refused() -> None:
    for uri, method in [(f"{MOTO}/lake", "GET"), (f"{MOTO}/lake?location", "GET"), (f"{MOTO}/lake", "DELETE")]:
        with pytest.raises(ForbiddenError):
            _allowed(uri, method)


def test_a_listing_with_a_repeated_prefix_is_refused_whichever_value_s3_would_use() -> None:
    inside_table, elsewhere = "prefix=wh%2Fns%2Ft%2F", "prefix=wh%2Fns%2Fother%2F"
    for query in (f"{inside_table}&{elsewhere}", f"{elsewhere}&{inside_table}", f"{inside_table}&pre%66ix=wh%2F"):
        with pytest.raises(ForbiddenError, match="repeated"):
            _allowed(f"{MOTO}/lake?list-type=2&{query}")


@pytest.mark.parametrize("subresource", ["acl", "policy", "versions", "cors", "lifecycle", "uploads", "tagging"])
def test_bucket_sub_resources_are_refused_even_with_a_prefix_inside_the_table(subresource: str) -> None:
    with pytest.raises(ForbiddenError):
        _allowed(f"{MOTO}/lake?{subresource}&prefix=wh%2Fns%2Ft%2F")
    with pytest.raises(ForbiddenError):
        _allowed(f"{MOTO}/lake?{subresource}", "PUT")


@pytest.mark.parametrize(
    ("method", "query"),
    [
        ("GET", "acl"),
        ("PUT", "acl"),
        ("PUT", "tagging"),
        ("GET", "versionId=3"),
        ("PUT", "retention"),
        ("PUT", "legal-hold"),
        ("POST", "restore"),
        ("POST", "select&select-type=2"),
        ("POST", ""),
        ("DELETE", "versionId=3"),
        ("GET", "torrent"),
    ],
)
def test_object_sub_resources_outside_iceberg_clients_operations_are_refused(method: str, query: str) -> None:
    with pytest.raises(ForbiddenError):
        _allowed(f"{MOTO}/lake/wh/ns/t/data/f.parquet?{query}", method)


def test_iceberg_clients_object_and_multipart_operations_are_named() -> None:
    def operation(method: str, query: str) -> str:
        return request_scope(_profile(), S3Request(method, f"{MOTO}/lake/wh/ns/t/f?{query}")).operation

    assert operation("GET", "x-id=GetObject&response-content-type=x") == "GetObject"
    assert operation("HEAD", "") == "HeadObject"
    assert operation("PUT", "x-id=PutObject") == "PutObject"
    assert operation("POST", "uploads") == "CreateMultipartUpload"
    assert operation("PUT", "partNumber=1&uploadId=u") == "UploadPart"
    assert operation("POST", "uploadId=u") == "CompleteMultipartUpload"
    assert operation("DELETE", "uploadId=u") == "AbortMultipartUpload"
    assert operation("DELETE", "") == "DeleteObject"
    listing = request_scope(_profile(), S3Request("GET", f"{MOTO}/lake?list-type=2&prefix=wh/ns/t/"))
    assert (listing.operation, listing.listing) == ("ListObjectsV2", True)


def test_delete_objects_is_checked_key_by_key_from_its_body() -> None:
    body = (
        '<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>wh/ns/t/a</Key></Object>'
        "<Object><Key>wh/ns/t/b</Key></Object></Delete>"
    )
    assert _allowed(f"{MOTO}/lake?delete", "POST", body)
    assert not _allowed(f"{MOTO}/lake?delete", "POST", body.replace("wh/ns/t/b", "wh/ns/u/b"))
    with pytest.raises(ForbiddenError):
        _allowed(f"{MOTO}/lake?delete", "POST", None)
    with pytest.raises(ForbiddenError):
        _allowed(f"{MOTO}/lake?delete", "POST", "<Delete><Object><Key>")


def test_methods_map_to_select_or_modify_and_others_are_refused() -> None:
    assert [privilege_for(m) for m in ("GET", "head", "PUT", "POST", "DELETE")] == [
        "select",
        "select",
        "modify",
        "modify",
        "modify",
    ]
    for method in ("PATCH", "OPTIONS", "TRACE"):
        with pytest.raises(ForbiddenError):
            privilege_for(method)


def test_s3a_table_locations_hold_s3_objects() -> None:
    scope = request_scope(_profile(), S3Request("GET", f"{MOTO}/lake/wh/ns/t/f"))
    assert inside(scope, "s3a://lake/wh/ns/t/")
    assert not inside(scope, "file:///lake/wh/ns/t")


def test_signing_applies_per_delegation_header_and_profile() -> None:
    on, sts = _profile(remote_signing_enabled=True), _profile(remote_signing_enabled=True, sts_enabled=True)
    assert signing_applies(on, parse_access_delegation(None))
    assert signing_applies(on, parse_access_delegation("vended-credentials"))  # nothing to vend: sign instead
    assert not signing_applies(sts, parse_access_delegation("vended-credentials"))
    assert signing_applies(sts, parse_access_delegation("Vended-Credentials, remote-signing"))
    assert not signing_applies(on, parse_access_delegation("client-managed"))
    assert not signing_applies(_profile(remote_signing_enabled=False), parse_access_delegation("remote-signing"))
    assert signing_applies(_profile(), parse_access_delegation(None))  # on by default, as in Lakekeeper
    assert not signing_applies(on, parse_access_delegation(None), can_sign=False)  # no access key to sign with
    shared = _profile(share_static_credentials_with_clients=True)
    assert not signing_applies(shared, parse_access_delegation("vended-credentials"))  # clients have keys
    assert signing_applies(shared, parse_access_delegation("remote-signing"))


def test_signing_config_points_at_the_tables_sign_route() -> None:
    config = remote_signing_config(
        _profile(remote_signing_enabled=True), set(), "http://h:1/catalog/", "w-1", Namespace(("a b", "c")), "t/1"
    )
    assert config["s3.remote-signing-enabled"] == "true"
    assert config["s3.signer"] == "S3V4RestSigner"
    assert config["py-io-impl"] == "pyiceberg.io.fsspec.FsspecFileIO"
    assert config["s3.signer.uri"] == config["signer.uri"] == "http://h:1/catalog"
    assert config["s3.signer.endpoint"] == config["signer.endpoint"] == "v1/w-1/namespaces/a%20b%1Fc/tables/t%2F1/sign"
    off = remote_signing_config(
        _profile(remote_signing_enabled=False), {"remote-signing"}, "http://h/catalog", "w", Namespace(("a",)), "t"
    )
    assert off == {"s3.remote-signing-enabled": "false"}
