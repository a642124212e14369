"""Storage profiles and credentials: decoding, validation, update rules and the IO settings they produce."""

from __future__ import annotations

import re
import uuid

import pytest

from catalog_es.errors import BadRequestError
from catalog_es.locations import overlaps
from catalog_es.storage.backends import backend_for
from catalog_es.storage.backends.s3 import s3_fileio_properties as fileio_properties
from catalog_es.storage.layout import table_location
from catalog_es.storage.profiles import (
    FileProfile,
    S3AccessKeyCredential,
    S3Profile,
    base_location,
    check_profile_update,
    decode_credential,
    decode_profile,
    encode_profile,
    location_schemes,
)

S3 = {"type": "s3", "bucket": "lake", "region": "eu-central-1"}
KEYS = {"type": "s3", "credential-type": "access-key", "access-key-id": "AKIA1", "secret-access-key": "shh"}

UUID = uuid.UUID(int=7)


def client_config(profile, credential):
    """What table responses give clients for this storage (the backend's, as the server computes it)."""
    return backend_for(profile, credential).client_config()


def s3(**fields: object) -> S3Profile:
    profile = decode_profile({**S3, **fields})
    assert isinstance(profile, S3Profile)
    return profile


def test_decode_profile_reads_kebab_case_s3_fields_when_well_formed():
    profile = s3(**{"key-prefix": "/a/b/", "endpoint": "http://minio:9000/", "path-style-access": True})
    assert profile == S3Profile(
        bucket="lake", region="eu-central-1", key_prefix="a/b", endpoint="http://minio:9000", path_style_access=True
    )


def test_decode_profile_reads_file_profile_when_path_is_absolute():
    assert decode_profile({"type": "file", "location": "/data/lake"}) == FileProfile(location="/data/lake")
    assert base_location(decode_profile({"type": "file", "location": "file:///data//lake/"})) == "file:///data/lake"


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({"type": "hdfs", "bucket": "x"}, "type"),
        ({"bucket": "lake", "region": "r"}, "type"),
        ({**S3, "colour": "blue"}, "colour"),
        ({**S3, "sts-enabled": "yes"}, "sts-enabled"),
        ({"type": "s3", "bucket": "lake"}, "region"),
        ({"type": "file", "location": "relative/dir"}, "absolute"),
        ({"type": "file", "location": "s3://bucket/x"}, "absolute"),
        ({"type": "file", "location": "/data/../etc"}, ".."),
        ({"type": "file", "location": "/"}, "below"),
        ({**S3, "bucket": "Upper_Case"}, "bucket name"),
        ({**S3, "bucket": "ab"}, "bucket name"),
        ({**S3, "bucket": "a..b"}, "adjacent"),
        ({**S3, "bucket": "192.168.1.1"}, "IP address"),
        ({**S3, "key-prefix": "a/../b"}, "key-prefix"),
        ({**S3, "endpoint": "minio:9000"}, "endpoint"),
        ({**S3, "region": " "}, "region"),
        ({**S3, "flavor": "gcs"}, "flavor"),
    ],
)
def test_decode_profile_refuses_with_message_when_document_is_invalid(document, fragment):
    with pytest.raises(BadRequestError, match=fragment):
        decode_profile(document)


def test_decode_profile_refuses_when_document_is_not_an_object():
    with pytest.raises(BadRequestError, match="JSON object"):
        decode_profile(["s3"])  # type: ignore[arg-type]


def test_encode_profile_round_trips_and_holds_no_secret_fields():
    profile = s3(**{"key-prefix": "p", "share-static-credentials-with-clients": True})
    document = encode_profile(profile)
    assert document["type"] == "s3"
    assert document["key-prefix"] == "p"
    assert not any("secret" in name or "access-key" in name for name in document)
    assert decode_profile(document) == profile


def test_base_location_joins_bucket_and_key_prefix():
    assert base_location(s3()) == "s3://lake"
    assert base_location(s3(**{"key-prefix": "x/y"})) == "s3://lake/x/y"


def test_base_locations_overlap_when_one_key_prefix_contains_the_other():
    assert overlaps(base_location(s3(**{"key-prefix": "x"})), base_location(s3(**{"key-prefix": "x/y"})))
    assert overlaps(base_location(s3()), base_location(s3(**{"key-prefix": "x"})))
    assert not overlaps(base_location(s3(**{"key-prefix": "x"})), base_location(s3(**{"key-prefix": "xa"})))
    assert not overlaps(base_location(s3()), base_location(decode_profile({**S3, "bucket": "other"})))


def test_location_schemes_include_s3a_only_when_alternative_protocols_are_allowed():
    assert location_schemes(s3()) == ("s3",)
    assert set(location_schemes(s3(**{"allow-alternative-protocols": True}))) == {"s3", "s3a", "s3n"}
    assert location_schemes(FileProfile(location="/x")) == ("file",)


def test_decode_credential_reads_access_key_pair():
    credential = decode_credential({**KEYS, "external-id": "ext"})
    assert credential == S3AccessKeyCredential(
        credential_type="access-key", access_key_id="AKIA1", secret_access_key="shh", external_id="ext"
    )
    assert "shh" not in repr(credential)


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        ({**KEYS, "credential-type": "aws-system-identity"}, "Unsupported"),
        ({**KEYS, "type": "az"}, "Unsupported"),
        ({**KEYS, "token": "x"}, "token"),
        ({"type": "s3", "credential-type": "access-key", "access-key-id": "a"}, "secret-access-key"),
        ({**KEYS, "secret-access-key": " "}, "empty"),
    ],
)
def test_decode_credential_refuses_when_document_is_invalid(document, fragment):
    with pytest.raises(BadRequestError, match=fragment):
        decode_credential(document)


@pytest.mark.parametrize(
    ("new", "fragment"),
    [
        ({"type": "file", "location": "/x"}, "type"),
        ({**S3, "key-prefix": "p", "bucket": "other"}, "immutable"),
        ({**S3, "key-prefix": "p2"}, "immutable"),
        (S3, "immutable"),
        ({**S3, "key-prefix": "p", "region": "us-east-1"}, "Region"),
    ],
)
def test_check_profile_update_refuses_when_data_would_be_orphaned(new, fragment):
    with pytest.raises(BadRequestError, match=fragment):
        check_profile_update(s3(**{"key-prefix": "p"}), decode_profile(new))


def test_check_profile_update_allows_mutable_changes():
    old = s3(**{"key-prefix": "p", "endpoint": "http://a:9000"})
    check_profile_update(old, s3(**{"key-prefix": "/p/", "endpoint": "http://b:9000", "region": "other"}))
    check_profile_update(old, s3(**{"key-prefix": "p", "endpoint": "http://a:9000", "sts-enabled": True}))
    check_profile_update(FileProfile(location="/data/x"), FileProfile(location="file:///data/x/"))


def test_check_profile_update_refuses_when_file_location_moves():
    with pytest.raises(BadRequestError, match="immutable"):
        check_profile_update(FileProfile(location="/data/x"), FileProfile(location="/data/y"))


def test_client_config_gives_endpoint_region_and_path_style_but_no_keys_by_default():
    credential = decode_credential(KEYS)
    config = client_config(s3(endpoint="http://127.0.0.1:9000"), credential)
    assert config["s3.endpoint"] == "http://127.0.0.1:9000"
    assert config["s3.region"] == config["client.region"] == "eu-central-1"
    assert config["s3.path-style-access"] == "true"
    assert config["s3.force-virtual-addressing"] == "false"
    assert "s3.delete-enabled" not in config
    assert not any("shh" in value or "AKIA1" in value for value in config.values())
    assert not any(key in config for key in ("s3.access-key-id", "s3.secret-access-key"))


def test_client_config_gives_static_keys_when_profile_shares_them():
    config = client_config(s3(**{"share-static-credentials-with-clients": True}), decode_credential(KEYS))
    assert config["s3.access-key-id"] == "AKIA1"
    assert config["s3.secret-access-key"] == "shh"
    assert config["s3.path-style-access"] == "false"  # AWS without an endpoint: virtual hosts
    assert "s3.endpoint" not in config


def test_client_config_disables_client_deletes_when_profile_says_so():
    assert client_config(s3(**{"push-s3-delete-disabled": True}), None)["s3.delete-enabled"] == "false"


def test_client_config_is_empty_for_file_storage():
    assert client_config(FileProfile(location="/x"), None) == {}


def test_fileio_properties_carry_endpoint_region_keys_and_addressing():
    properties = fileio_properties(s3(endpoint="http://127.0.0.1:9000"), decode_credential(KEYS))
    assert properties["s3.endpoint"] == "http://127.0.0.1:9000"
    assert properties["s3.region"] == "eu-central-1"
    assert properties["s3.access-key-id"] == "AKIA1"
    assert properties["s3.secret-access-key"] == "shh"
    assert properties["s3.force-virtual-addressing"] == "false"
    assert fileio_properties(s3(**{"path-style-access": False}), None)["s3.force-virtual-addressing"] == "true"
    assert "s3.access-key-id" not in fileio_properties(s3(), None)


# Lakekeeper's own payloads (examples/minimal/create-default-warehouse.json, tests/python/tests/conftest.py).
LAKEKEEPER_PROFILE = {
    "type": "s3",
    "bucket": "examples",
    "key-prefix": "initial-warehouse",
    "assume-role-arn": None,
    "endpoint": "http://127.0.0.1:9000",
    "region": "local-01",
    "path-style-access": True,
    "flavor": "minio",
    "sts-enabled": True,
}
LAKEKEEPER_KEYS = {
    "type": "s3",
    "credential-type": "access-key",
    "aws-access-key-id": "minio-root-user",
    "aws-secret-access-key": "minio-root-password",
}


def test_decode_profile_accepts_lakekeepers_example_profile_and_reads_minio_as_s3_compat():
    profile = decode_profile(LAKEKEEPER_PROFILE)
    assert isinstance(profile, S3Profile)
    assert profile.flavor == "s3-compat"
    assert profile.assume_role_arn is None
    assert profile.sts_enabled is True
    assert encode_profile(profile)["flavor"] == "s3-compat"


@pytest.mark.parametrize("flavor", ["aws", "s3-compat", "minio"])
def test_decode_profile_accepts_every_lakekeeper_flavor(flavor):
    assert s3(flavor=flavor).flavor == ("aws" if flavor == "aws" else "s3-compat")


def test_decode_profile_accepts_lakekeepers_optional_s3_fields():
    profile = s3(
        **{
            "legacy-md5-behavior": True,
            "sts-session-tags": {"team": "data"},
            "remote-signing-url-style": "path",
            "aws-kms-key-arn": None,
            "sts-role-arn": None,
            "path-style-access": None,
            "endpoint": None,
        }
    )
    assert profile.legacy_md5_behavior is True
    assert profile.sts_session_tags == {"team": "data"}
    assert profile.remote_signing_url_style == "path"


@pytest.mark.parametrize(
    "layout",
    [
        {"type": "default"},
        {"type": "parent-namespace-and-table", "namespace": "{uuid}", "tabular": "{uuid}"},
        {"type": "full-hierarchy", "namespace": "{name}-{uuid}", "tabular": "{name}-{uuid}"},
        {"type": "tabular-only", "tabular": "{name}-{uuid}"},
    ],
)
def test_decode_profile_accepts_lakekeepers_storage_layouts(layout):
    profile = s3(**{"storage-layout": layout})
    assert encode_profile(profile)["storage-layout"] == layout


@pytest.mark.parametrize(
    ("old", "current"),
    [
        ({"type": "table-only", "table": "t-{uuid}"}, {"type": "tabular-only", "tabular": "t-{uuid}"}),
        (
            {"type": "full-hierarchy", "namespace": "{name}", "table": "{uuid}"},
            {"type": "full-hierarchy", "namespace": "{name}", "tabular": "{uuid}"},
        ),
    ],
)
def test_decode_profile_reads_the_first_layout_spelling_as_an_alias_of_the_current_one(old, current):
    assert encode_profile(s3(**{"storage-layout": old}))["storage-layout"] == current
    assert table_location(old, "s3://b/wh", "s3://b/wh/ns", "t", UUID) == table_location(
        current, "s3://b/wh", "s3://b/wh/ns", "t", UUID
    )
    with pytest.raises(BadRequestError, match="not both"):
        s3(**{"storage-layout": {**current, "table": "{uuid}"}})


@pytest.mark.parametrize(
    ("layout", "fragment"),
    [
        ({"type": "tabular-only", "tabular": "{name}"}, "{uuid}"),
        ({"type": "flat", "table": "{uuid}"}, "storage-layout"),
        ({"type": "full-hierarchy", "namespace": "a/b", "table": "{uuid}"}, "/"),
        ({"type": "full-hierarchy", "namespace": "", "table": "{uuid}"}, "empty"),
    ],
)
def test_decode_profile_refuses_storage_layouts_that_cannot_name_one_directory(layout, fragment):
    with pytest.raises(BadRequestError, match=re.escape(fragment)):
        s3(**{"storage-layout": layout})


def test_decode_credential_reads_lakekeepers_aws_prefixed_keys():
    credential = decode_credential(LAKEKEEPER_KEYS)
    assert credential.access_key_id == "minio-root-user"
    assert credential.secret_access_key == "minio-root-password"
    # The short spelling is kept as an alias, and both decode to the same stored credential.
    assert decode_credential(KEYS) == decode_credential(
        {"type": "s3", "credential-type": "access-key", "aws-access-key-id": "AKIA1", "aws-secret-access-key": "shh"}
    )


def test_decode_credential_refuses_both_spellings_of_one_key():
    with pytest.raises(BadRequestError, match="aws-access-key-id"):
        decode_credential({**LAKEKEEPER_KEYS, "access-key-id": "other"})
