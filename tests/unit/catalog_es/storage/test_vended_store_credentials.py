"""Vended credentials for ADLS (directory SAS) and GCS (Credential Access Boundary), checked offline: the SAS
signature is recomputed from Azure's documented string-to-sign, the boundary document is read as Google would."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import time
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from catalog_es.errors import BadRequestError, InvalidLocationError, StorageAccessError
from catalog_es.storage.adls import AdlsProfile
from catalog_es.storage.adls_sas import adls_vended_config
from catalog_es.storage.backends import backend_for
from catalog_es.storage.backends.adls import AdlsBackend
from catalog_es.storage.backends.gcs import GcsBackend
from catalog_es.storage.gcs import GcsProfile
from catalog_es.storage.gcs_auth import access_token, source_credentials
from catalog_es.storage.gcs_tokens import access_boundary, gcs_vended_config
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import decode_credential, decode_profile
from catalog_es.storage.vendor import CredentialVendor

ACCOUNT_KEY = base64.b64encode(b"k" * 64).decode()
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def adls(**fields: object) -> AdlsProfile:
    profile = decode_profile({"type": "adls", "account-name": "acct", "filesystem": "lake", **fields})
    assert isinstance(profile, AdlsProfile)
    return profile


def sas(profile: AdlsProfile, location: str, permissions: str = "read") -> dict[str, list[str]]:
    shared = decode_credential({"type": "az", "credential-type": "shared-access-key", "key": ACCOUNT_KEY})
    config = adls_vended_config(profile, shared, location, permissions, NOW)  # type: ignore[arg-type]
    return parse_qs(config[f"adls.sas-token.acct.{profile.host or 'dfs.core.windows.net'}"])


def signature_for(fields: dict[str, list[str]], resource: str) -> str:
    """Azure's service-SAS string-to-sign (versions 2020-12-06 on), signed with the account key."""
    value = {name: values[0] for name, values in fields.items()}
    lines = [value["sp"], value["st"], value["se"], resource, "", "", value["spr"], value["sv"], value["sr"]]
    lines += ["", "", "", "", "", "", ""]  # snapshot, encryption scope, response headers
    digest = hmac.new(base64.b64decode(ACCOUNT_KEY), "\n".join(lines).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def test_sas_is_a_directory_sas_signed_for_the_table_directory_only():
    fields = sas(adls(), "abfss://lake@acct.dfs.core.windows.net/wh/ns/t")
    assert fields["sr"] == ["d"]
    assert fields["sdd"] == ["3"]
    assert fields["sig"] == [signature_for(fields, "/blob/acct/lake/wh/ns/t")]
    assert fields["sig"] != [signature_for(fields, "/blob/acct/lake/wh/ns/other")]
    assert fields["sig"] != [signature_for(fields, "/blob/acct/lake/wh/ns")]


def test_sas_grants_read_and_list_only_when_caller_may_only_read():
    assert sas(adls(), "abfss://lake@acct.dfs.core.windows.net/t")["sp"] == ["rl"]
    assert sas(adls(), "abfss://lake@acct.dfs.core.windows.net/t", "read-write")["sp"] == ["racwl"]
    assert sas(adls(), "abfss://lake@acct.dfs.core.windows.net/t", "read-write-delete")["sp"] == ["racwdl"]


def test_sas_is_signed_over_the_decoded_path_when_location_has_special_characters():
    fields = sas(adls(), "abfss://lake@acct.dfs.core.windows.net/wh/my%20table%27s")
    assert fields["sdd"] == ["2"]
    assert fields["sig"] == [signature_for(fields, "/blob/acct/lake/wh/my table's")]


def test_sas_validity_follows_profile_with_backdated_start_and_a_floor():
    fields = sas(adls(**{"sas-token-validity-seconds": 900}), "abfss://lake@acct.dfs.core.windows.net/t")
    start, expiry = (datetime.strptime(fields[k][0], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) for k in ("st", "se"))
    assert start == NOW - timedelta(seconds=60)
    assert expiry - start == timedelta(seconds=900)
    short = sas(adls(**{"sas-token-validity-seconds": 5}), "abfss://lake@acct.dfs.core.windows.net/t")
    assert short["se"] == [(NOW + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")]


def test_sas_config_keys_name_account_host_and_expiry_in_milliseconds():
    shared = decode_credential({"type": "az", "credential-type": "shared-access-key", "key": ACCOUNT_KEY})
    config = adls_vended_config(adls(), shared, "abfss://lake@acct.dfs.core.windows.net/t", "read", NOW)
    assert sorted(config) == [
        "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net",
        "adls.sas-token.acct.dfs.core.windows.net",
    ]
    expected = int((NOW + timedelta(seconds=3540)).timestamp() * 1000)
    assert config["adls.sas-token-expires-at-ms.acct.dfs.core.windows.net"] == str(expected)


@pytest.mark.parametrize(
    "location",
    [
        "abfss://lake@acct.dfs.core.windows.net",
        "abfss://other@acct.dfs.core.windows.net/t",
        "abfss://lake@other.dfs.core.windows.net/t",
        "s3://fs/t",
    ],
)
def test_sas_is_refused_when_location_is_not_a_table_directory_of_the_filesystem(location):
    with pytest.raises(InvalidLocationError):
        sas(adls(), location)


def gcs() -> GcsProfile:
    profile = decode_profile({"type": "gcs", "bucket": "lake", "sts-enabled": True})
    assert isinstance(profile, GcsProfile)
    return profile


def test_boundary_limits_objects_and_listings_to_the_table_prefix():
    rules = access_boundary("lake", "wh/t/", "read").to_json()["accessBoundary"]["accessBoundaryRules"]
    assert {rule["availableResource"] for rule in rules} == {"//storage.googleapis.com/projects/_/buckets/lake"}
    expressions = [rule["availabilityCondition"]["expression"] for rule in rules]
    assert expressions == [
        "resource.name.startsWith('projects/_/buckets/lake/objects/wh/t/')",
        "api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('wh/t/')",
    ]
    assert rules[0]["availablePermissions"] == ["inRole:roles/storage.objectViewer"]


def test_boundary_grants_object_creation_only_when_caller_may_write():
    def roles(permissions: str) -> list[str]:
        document = access_boundary("lake", "t/", permissions).to_json()  # type: ignore[arg-type]
        return document["accessBoundary"]["accessBoundaryRules"][0]["availablePermissions"]

    assert roles("read") == ["inRole:roles/storage.objectViewer"]
    assert roles("read-write") == ["inRole:roles/storage.objectViewer", "inRole:roles/storage.objectCreator"]
    assert roles("read-write-delete") == ["inRole:roles/storage.objectAdmin"]


def test_boundary_quotes_a_prefix_that_would_end_the_cel_string_literal():
    rules = access_boundary("lake", "wh/it's\\/", "read").to_json()["accessBoundary"]["accessBoundaryRules"]
    assert rules[0]["availabilityCondition"]["expression"] == (
        "resource.name.startsWith('projects/_/buckets/lake/objects/wh/it\\'s\\\\/')"
    )


def test_gcs_vended_config_exchanges_the_table_boundary_and_returns_token_and_expiry_ms():
    seen = []

    def exchange(source, boundary):
        seen.append((source, boundary.to_json()))
        return "downscoped-token", NOW

    credential = decode_credential({"type": "gcs", "credential-type": "service-account-key", "key": key_file()[0]})
    config = gcs_vended_config(gcs(), credential, "gs://lake/wh/a%20b", "read-write", exchange)
    assert config == {
        "gcs.oauth2.token": "downscoped-token",
        "gcs.oauth2.token-expires-at": str(int(NOW.timestamp() * 1000)),
    }
    expression = seen[0][1]["accessBoundary"]["accessBoundaryRules"][0]["availabilityCondition"]["expression"]
    assert expression == "resource.name.startsWith('projects/_/buckets/lake/objects/wh/a b/')"
    with pytest.raises(InvalidLocationError):
        gcs_vended_config(gcs(), credential, "gs://other/wh/t", "read", exchange)
    with pytest.raises(InvalidLocationError):
        gcs_vended_config(gcs(), credential, "gs://lake", "read", exchange)


def key_file() -> tuple[dict[str, str], rsa.RSAPrivateKey]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key = {
        "type": "service_account",
        "client_email": "catalog@p.iam.gserviceaccount.com",
        "private_key": pem.decode(),
        "private_key_id": uuid.uuid4().hex,
        "token_uri": "http://127.0.0.1:9/token",  # never called
    }
    return key, private


def test_catalog_token_is_a_self_signed_jwt_made_without_any_request_when_credential_is_a_key():
    key, private = key_file()
    credential = decode_credential({"type": "gcs", "credential-type": "service-account-key", "key": key})
    token, expiry = access_token(source_credentials(credential))  # token_uri is a dead port: no request made
    claims = jwt.decode(token, private.public_key(), algorithms=["RS256"], options={"verify_aud": False})
    assert claims["iss"] == claims["sub"] == "catalog@p.iam.gserviceaccount.com"
    assert claims["scope"] == "https://www.googleapis.com/auth/devstorage.read_write"
    assert jwt.get_unverified_header(token)["kid"] == key["private_key_id"]
    assert timedelta(minutes=50) < expiry - datetime.now(UTC) <= timedelta(hours=1)


def test_nothing_is_vended_when_the_profile_turns_vending_off():
    shared = decode_credential({"type": "az", "credential-type": "shared-access-key", "key": ACCOUNT_KEY})
    location = "abfss://lake@acct.dfs.core.windows.net/t"
    assert adls_vended_config(adls(**{"sas-enabled": False}), shared, location, "read", NOW) == {}
    off = decode_profile({"type": "gcs", "bucket": "lake"})
    assert isinstance(off, GcsProfile)
    google = decode_credential({"type": "gcs", "credential-type": "gcp-system-identity"})

    def exchange(source, boundary):
        raise AssertionError("no exchange when sts-enabled is off")

    assert gcs_vended_config(off, google, "gs://lake/t", "read", exchange) == {}


def test_a_burst_of_vending_mints_one_credential_per_table_level_and_principal_for_every_store():
    """200 concurrent loadTables' worth of vending: the shared cache's single flight holds for ADLS and GCS as for
    S3 (whose burst runs against moto in tests/integration/test_vended_credentials.py)."""
    exchanges = []

    def exchange(source, boundary):
        exchanges.append(boundary)
        time.sleep(0.05)  # a slow token service: the burst arrives while the first exchange is in flight
        return f"token-{len(exchanges)}", datetime.now(UTC) + timedelta(hours=1)

    vendor = CredentialVendor()
    shared = decode_credential({"type": "az", "credential-type": "shared-access-key", "key": ACCOUNT_KEY})
    google = decode_credential({"type": "gcs", "credential-type": "service-account-key", "key": key_file()[0]})
    azure = AdlsBackend(adls(), shared, EndpointPolicy())  # a shared key signs the SAS here: nothing is called
    bucket = GcsBackend(gcs(), google, EndpointPolicy(), exchange)
    azure_table, google_table = "abfss://lake@acct.dfs.core.windows.net/wh/ns/t", "gs://lake/wh/ns/t"

    async def burst() -> list[dict[str, str]]:
        calls = [vendor.vend(azure, azure_table, "read", "alice") for _ in range(200)]
        calls += [vendor.vend(bucket, google_table, "read", "alice") for _ in range(200)]
        calls += [vendor.vend(bucket, google_table, "read-write", "alice") for _ in range(10)]
        calls += [vendor.vend(bucket, google_table, "read", "bob") for _ in range(10)]
        return await asyncio.gather(*calls)

    answers = asyncio.run(burst())
    assert vendor.cache.issued == 4  # ADLS; GCS read, read-write, and read for another principal
    assert len(exchanges) == 3
    assert len({answer["gcs.oauth2.token"] for answer in answers[200:400]}) == 1
    assert len({tuple(answer.items()) for answer in answers[:200]}) == 1


def test_a_credential_of_another_store_is_refused_before_any_call():
    s3_key = decode_credential(
        {"type": "s3", "credential-type": "access-key", "access-key-id": "a", "secret-access-key": "b"}
    )
    with pytest.raises(BadRequestError):
        backend_for(gcs(), s3_key)
    with pytest.raises(StorageAccessError):  # a GCS warehouse without a credential has nothing to vend with
        asyncio.run(CredentialVendor().vend(GcsBackend(gcs(), None, EndpointPolicy()), "gs://lake/t", "read", "a"))
