"""GCS warehouse storage on gcp-storage-emulator (the GCS JSON API): access checks, metadata IO, emptiness and
purges confined to the table. The emulator checks no token, so token scoping is tested offline (unit tests)."""

from __future__ import annotations

import pytest

from catalog_es.errors import BadRequestError, InvalidLocationError, StorageAccessError
from catalog_es.storage.backends import validate_access
from catalog_es.storage.files import ForeignLocationError, WarehouseStorage
from catalog_es.storage.gcs import GcsProfile
from catalog_es.storage.outbound import EndpointNotAllowedError, EndpointPolicy
from catalog_es.storage.profiles import StorageCredential, decode_credential, decode_profile
from tests.integration.store_emulators import GcsEmulator, free_port, service_account_key

LOOPBACK = EndpointPolicy(allowed_hosts=("127.0.0.1",))
DOCUMENT = {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "x"}


@pytest.fixture(scope="module")
def credential() -> StorageCredential:
    return decode_credential({"type": "gcs", "credential-type": "service-account-key", "key": service_account_key()})


def profile(emulator: GcsEmulator | str, bucket: str, **fields: object) -> GcsProfile:
    endpoint = emulator if isinstance(emulator, str) else emulator.endpoint
    decoded = decode_profile({"type": "gcs", "bucket": bucket, "endpoint": endpoint, **fields})
    assert isinstance(decoded, GcsProfile)
    return decoded


def test_validate_access_succeeds_and_leaves_nothing_behind_when_bucket_is_usable(gcs_emulator, credential):
    bucket = gcs_emulator.make_bucket()
    validate_access(profile(gcs_emulator, bucket, **{"key-prefix": "wh/one"}), credential, LOOPBACK)
    assert gcs_emulator.objects(bucket) == []


def test_validate_access_fails_naming_bucket_when_nothing_listens(credential):
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(StorageAccessError) as raised:
        validate_access(profile(dead, "some-bucket"), credential, LOOPBACK)
    assert isinstance(raised.value, BadRequestError)
    assert "some-bucket" in str(raised.value)


def test_validate_access_refuses_endpoint_and_missing_credential_before_connecting(gcs_emulator, credential):
    bucket = gcs_emulator.make_bucket()
    with pytest.raises(EndpointNotAllowedError):
        validate_access(profile(gcs_emulator, bucket), credential, EndpointPolicy())
    with pytest.raises(StorageAccessError, match="needs a credential"):
        validate_access(profile(gcs_emulator, bucket), None, LOOPBACK)


def test_metadata_is_written_read_and_never_overwritten_when_location_is_in_warehouse(gcs_emulator, credential):
    bucket = gcs_emulator.make_bucket()
    storage = WarehouseStorage(profile(gcs_emulator, bucket, **{"key-prefix": "wh"}), credential, LOOPBACK)
    location = f"gs://{bucket}/wh/ns/t/metadata/00000-a.metadata.json"
    storage.write_metadata(location, DOCUMENT)
    assert storage.read_metadata(location) == DOCUMENT
    assert gcs_emulator.objects(bucket) == ["wh/ns/t/metadata/00000-a.metadata.json"]
    with pytest.raises(FileExistsError):
        storage.write_metadata(location, {**DOCUMENT, "location": "y"})
    assert storage.read_metadata(location) == DOCUMENT


def test_locations_outside_the_warehouse_are_refused_before_any_io(gcs_emulator, credential):
    bucket = gcs_emulator.make_bucket()
    storage = WarehouseStorage(profile(gcs_emulator, bucket, **{"key-prefix": "wh"}), credential, LOOPBACK)
    for foreign in ("gs://other-bucket/wh/t/m.json", f"s3://{bucket}/wh/t/m.json", "file:///tmp/wh/m.json"):
        with pytest.raises(ForeignLocationError):
            storage.write_metadata(foreign, DOCUMENT)
    with pytest.raises(InvalidLocationError):
        storage.write_metadata(f"gs://{bucket}/elsewhere/m.json", DOCUMENT)
    assert gcs_emulator.objects(bucket) == []


def test_purge_removes_only_the_table_when_a_sibling_shares_its_name_prefix(gcs_emulator, credential):
    bucket = gcs_emulator.make_bucket()
    storage = WarehouseStorage(profile(gcs_emulator, bucket), credential, LOOPBACK)
    for name in ("t/metadata/a.json", "t/data/x.parquet", "t2/metadata/a.json", "t-other.json"):
        storage.write_metadata(f"gs://{bucket}/{name}", DOCUMENT)
    assert not storage.is_empty(f"gs://{bucket}/t")
    assert sorted(storage.files_below(f"gs://{bucket}/t")) == ["data/x.parquet", "metadata/a.json"]
    storage.purge(f"gs://{bucket}/t")
    assert storage.is_empty(f"gs://{bucket}/t")
    assert gcs_emulator.objects(bucket) == ["t-other.json", "t2/metadata/a.json"]
    assert storage.is_empty(f"gs://{bucket}/never-written")
