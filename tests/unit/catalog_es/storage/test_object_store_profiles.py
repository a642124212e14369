"""The `adls` and `gcs` storage profiles and their credentials: validation, base locations, location rules."""

from __future__ import annotations

import pytest

from catalog_es.errors import BadRequestError, InvalidLocationError
from catalog_es.locations import location_key, overlaps, require_inside_warehouse
from catalog_es.storage.adls import AdlsProfile, adls_client_config
from catalog_es.storage.backends import backend_for
from catalog_es.storage.gcs import GcsProfile
from catalog_es.storage.profiles import (
    base_location,
    check_credential_fits,
    check_profile_update,
    decode_credential,
    decode_profile,
    encode_credential,
    encode_profile,
    location_schemes,
)

ADLS = {"type": "adls", "account-name": "account1", "filesystem": "fs-one"}
GCS = {"type": "gcs", "bucket": "bucket_one"}
KEY = {"type": "service_account", "client_email": "a@b", "private_key": "-----", "private_key_id": "1"}


def client_config(profile, credential):
    """What table responses give clients for this storage (the backend's, as the server computes it)."""
    return backend_for(profile, credential).client_config()


def test_adls_base_location_uses_filesystem_account_host_and_tidied_prefix_when_decoded():
    profile = decode_profile({**ADLS, "key-prefix": "/wh//one/"})
    assert isinstance(profile, AdlsProfile)
    assert base_location(profile) == "abfss://fs-one@account1.dfs.core.windows.net/wh/one"
    china = decode_profile({**ADLS, "host": "https://DFS.core.chinacloudapi.cn/"})
    assert base_location(china) == "abfss://fs-one@account1.dfs.core.chinacloudapi.cn"
    assert decode_profile({**ADLS, "host": "dfs.core.windows.net"}) == decode_profile(
        ADLS
    )  # the default, stored as None
    assert decode_profile(encode_profile(profile)) == profile


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"account-name": "Account1"}, "account-name"),
        ({"account-name": "ab"}, "account-name"),
        ({"filesystem": "fs--one"}, "filesystem"),
        ({"filesystem": "-fs"}, "filesystem"),
        ({"key-prefix": "a/../b"}, "key-prefix"),
        ({"key-prefix": "x" * 513}, "key-prefix"),
        ({"host": "not a host"}, "host"),
        ({"sas-token-validity-seconds": 0}, "sas-token-validity-seconds"),
        ({"sas-token-validity-seconds": 7 * 24 * 3600 + 1}, "sas-token-validity-seconds"),
        ({"authority-host": "http://login.example.com"}, "authority-host"),
        ({"endpoint": "ftp://127.0.0.1:10000/a"}, "endpoint"),
        ({"sts-enabled": True}, "sts-enabled"),
    ],
)
def test_adls_profile_is_refused_with_the_field_named_when_invalid(fields, message):
    with pytest.raises(BadRequestError, match=message):
        decode_profile({**ADLS, **fields})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"bucket": "Bucket"}, "bucket"),
        ({"bucket": "googbucket"}, "goog"),
        ({"bucket": "my-google-data"}, "google"),
        ({"key-prefix": "a/./b"}, "key-prefix"),
        ({"endpoint": "http://127.0.0.1:9023/storage/v1"}, "endpoint"),
        ({"region": "x"}, "region"),
    ],
)
def test_gcs_profile_is_refused_with_the_field_named_when_invalid(fields, message):
    with pytest.raises(BadRequestError, match=message):
        decode_profile({**GCS, **fields})


def test_gcs_base_location_and_client_endpoint_when_decoded():
    profile = decode_profile({**GCS, "key-prefix": "wh/", "endpoint": "http://127.0.0.1:9023/"})
    assert isinstance(profile, GcsProfile)
    assert base_location(profile) == "gs://bucket_one/wh"
    assert location_schemes(profile) == ("gs",)
    assert client_config(profile, None) == {"gcs.service.host": "http://127.0.0.1:9023"}


def test_adls_client_config_points_clients_at_the_emulator_only_when_an_endpoint_is_set():
    assert client_config(decode_profile(ADLS), None) == {}
    emulator = decode_profile({**ADLS, "endpoint": "http://127.0.0.1:10000/account1"})
    assert isinstance(emulator, AdlsProfile)
    assert adls_client_config(emulator)["adls.blob-storage-authority"] == "127.0.0.1:10000"
    assert adls_client_config(emulator)["adls.blob-storage-scheme"] == "http"


def test_wasbs_is_another_spelling_of_the_abfss_location_when_alternative_protocols_are_allowed():
    allowed = decode_profile({**ADLS, "allow-alternative-protocols": True})
    assert location_schemes(allowed) == ("abfss", "wasbs")
    assert location_schemes(decode_profile(ADLS)) == ("abfss",)
    wasbs = "wasbs://fs-one@account1.blob.core.windows.net/wh/t"
    assert location_key(wasbs) == "abfss://fs-one@account1.dfs.core.windows.net/wh/t"
    assert overlaps(wasbs, "abfss://fs-one@account1.dfs.core.windows.net/wh")
    warehouse = base_location(allowed)
    assert require_inside_warehouse(wasbs, warehouse, ("wasbs",)) == wasbs  # kept as written
    with pytest.raises(InvalidLocationError):
        require_inside_warehouse(wasbs, warehouse)
    with pytest.raises(InvalidLocationError):
        require_inside_warehouse("wasbs://other@account1.blob.core.windows.net/wh/t", warehouse, ("wasbs",))


def test_adls_profile_update_refuses_another_account_filesystem_prefix_or_host():
    old = decode_profile({**ADLS, "key-prefix": "wh"})
    check_profile_update(old, decode_profile({**ADLS, "key-prefix": "wh", "sas-token-validity-seconds": 600}))
    for changed in ({"key-prefix": "other"}, {"filesystem": "fs-two"}, {"host": "dfs.core.usgovcloudapi.net"}):
        with pytest.raises(BadRequestError):
            check_profile_update(old, decode_profile({**ADLS, "key-prefix": "wh", **changed}))
    with pytest.raises(BadRequestError, match="type"):
        check_profile_update(old, decode_profile(GCS))


def test_azure_and_gcs_credentials_decode_and_never_show_secrets_in_repr():
    shared = decode_credential({"type": "az", "credential-type": "shared-access-key", "key": "c2VjcmV0"})
    client = decode_credential(
        {
            "type": "az",
            "credential-type": "client-credentials",
            "client-id": "c",
            "client-secret": "s3cr3t",
            "tenant-id": "t",
        }
    )
    system = decode_credential({"type": "az", "credential-type": "azure-system-identity"})
    key = decode_credential({"type": "gcs", "credential-type": "service-account-key", "key": KEY})
    google = decode_credential({"type": "gcs", "credential-type": "gcp-system-identity"})
    assert "c2VjcmV0" not in repr(shared)
    assert "s3cr3t" not in repr(client)
    assert "-----" not in repr(key)
    for credential in (shared, client, system, key, google):
        assert decode_credential(encode_credential(credential)) == credential


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"type": "az", "credential-type": "shared-access-key", "key": " "}, "key"),
        ({"type": "az", "credential-type": "client-credentials", "client-id": "c", "tenant-id": "t"}, "client-secret"),
        ({"type": "gcs", "credential-type": "service-account-key", "key": {**KEY, "private_key": ""}}, "private_key"),
        ({"type": "gcs", "credential-type": "service-account-key", "key": {**KEY, "type": "user"}}, "service_account"),
        ({"type": "gcs", "credential-type": "access-key"}, "Unsupported"),
    ],
)
def test_credentials_are_refused_with_the_reason_when_incomplete(document, message):
    with pytest.raises(BadRequestError, match=message):
        decode_credential(document)


def test_a_credential_must_be_of_the_profiles_store():
    s3 = decode_credential(
        {"type": "s3", "credential-type": "access-key", "access-key-id": "a", "secret-access-key": "b"}
    )
    azure = decode_credential({"type": "az", "credential-type": "shared-access-key", "key": "k"})
    google = decode_credential({"type": "gcs", "credential-type": "gcp-system-identity"})
    check_credential_fits(decode_profile(ADLS), azure)
    check_credential_fits(decode_profile(GCS), google)
    check_credential_fits(decode_profile(GCS), None)
    for profile, credential in ((ADLS, s3), (ADLS, google), (GCS, azure)):
        with pytest.raises(BadRequestError, match="cannot use"):
            check_credential_fits(decode_profile(profile), credential)
