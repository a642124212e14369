"""Warehouse storage on a real S3 API (moto server mode): access checks, metadata IO, emptiness and purges."""

from __future__ import annotations

import socket
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.io import load_file_io

from catalog_es.errors import BadRequestError, StorageAccessError
from catalog_es.storage.backends import backend_for, validate_access
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.outbound import EndpointNotAllowedError, EndpointPolicy
from catalog_es.storage.profiles import (
    FileProfile,
    S3Profile,
    StorageCredential,
    decode_credential,
    decode_profile,
)
from tests.integration.s3_server import ACCESS_KEY_ID, REGION, SECRET_ACCESS_KEY, make_bucket, object_keys, s3_admin
from tests.security.hostile_s3 import hostile_endpoint

LOOPBACK = EndpointPolicy(allowed_hosts=("127.0.0.1",))  # moto listens there
DOCUMENT = {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "x"}


def client_config(profile, credential):
    """What table responses give clients for this storage (the backend's, as the server computes it)."""
    return backend_for(profile, credential).client_config()


def credential() -> StorageCredential:
    return decode_credential(
        {
            "type": "s3",
            "credential-type": "access-key",
            "access-key-id": ACCESS_KEY_ID,
            "secret-access-key": SECRET_ACCESS_KEY,
        }
    )


def profile(endpoint: str, bucket: str, **fields: object) -> S3Profile:
    document = {"type": "s3", "bucket": bucket, "region": REGION, "endpoint": endpoint, **fields}
    decoded = decode_profile(document)
    assert isinstance(decoded, S3Profile)
    return decoded


@pytest.fixture
def bucket(s3_endpoint: str) -> str:
    return make_bucket(s3_endpoint)


def test_validate_access_succeeds_and_leaves_nothing_behind_when_bucket_is_usable(s3_endpoint, bucket):
    validate_access(profile(s3_endpoint, bucket, **{"key-prefix": "wh/one"}), credential(), LOOPBACK)
    validate_access(
        profile(s3_endpoint, bucket, **{"path-style-access": True, "flavor": "s3-compat"}), credential(), LOOPBACK
    )
    assert object_keys(s3_endpoint, bucket) == []


def test_validate_access_fails_naming_bucket_and_reason_when_bucket_is_missing(s3_endpoint):
    with pytest.raises(StorageAccessError) as raised:
        validate_access(profile(s3_endpoint, "no-such-bucket-here"), credential(), LOOPBACK)
    message = str(raised.value)
    assert "no-such-bucket-here" in message
    assert s3_endpoint in message
    assert "NoSuchBucket" in message
    assert isinstance(raised.value, BadRequestError)  # answered as 400, never 500


def test_validate_access_fails_naming_endpoint_when_nothing_listens_there(bucket):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(StorageAccessError, match="Could not connect") as raised:
        validate_access(profile(dead, bucket), credential(), LOOPBACK)
    assert dead in str(raised.value)


def test_validate_access_sends_unsigned_requests_never_ambient_keys_when_no_credential_is_given(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAAMBIENTCHAINKEY01")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "ambient-secret")
    with hostile_endpoint() as target, pytest.raises(StorageAccessError, match="AccessDenied"):
        validate_access(profile(target.url, "lake"), None, LOOPBACK)
    assert target.requests
    assert all("Authorization" not in headers for headers in target.requests)


def test_validate_access_refuses_an_endpoint_off_the_allow_list_before_connecting(s3_endpoint, bucket):
    with pytest.raises(EndpointNotAllowedError, match="CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS"):
        validate_access(profile(s3_endpoint, bucket), credential())  # the default policy: AWS only
    with pytest.raises(EndpointNotAllowedError, match="link-local"):
        validate_access(profile(s3_endpoint, bucket, **{"sts-endpoint": "http://169.254.169.254"}), None, LOOPBACK)


def test_validate_access_creates_a_missing_directory_for_file_storage(tmp_path: Path):
    validate_access(FileProfile(location=str(tmp_path / "new" / "warehouse")), None)
    assert list((tmp_path / "new" / "warehouse").iterdir()) == []


def test_validate_access_fails_for_file_storage_when_path_is_below_a_file(tmp_path: Path):
    (tmp_path / "plain").write_text("not a directory")
    with pytest.raises(StorageAccessError, match="plain"):
        validate_access(FileProfile(location=str(tmp_path / "plain" / "warehouse")), None)


def test_warehouse_storage_writes_reads_and_deletes_metadata_on_s3(s3_endpoint, bucket):
    storage = WarehouseStorage(profile(s3_endpoint, bucket, **{"key-prefix": "wh"}), credential(), LOOPBACK)
    plain = f"s3://{bucket}/wh/t1/metadata/00000-a.metadata.json"
    compressed = f"s3://{bucket}/wh/t1/metadata/00001-b.gz.metadata.json"
    storage.write_metadata(plain, DOCUMENT)
    storage.write_metadata(compressed, DOCUMENT)
    assert storage.read_metadata(plain) == DOCUMENT
    assert storage.read_metadata(compressed) == DOCUMENT
    assert object_keys(s3_endpoint, bucket) == [
        "wh/t1/metadata/00000-a.metadata.json",
        "wh/t1/metadata/00001-b.gz.metadata.json",
    ]
    with pytest.raises(FileExistsError):
        storage.write_metadata(plain, DOCUMENT)
    storage.delete_file(plain)
    assert object_keys(s3_endpoint, bucket) == ["wh/t1/metadata/00001-b.gz.metadata.json"]


def test_warehouse_storage_sees_emptiness_by_whole_path_segments_on_s3(s3_endpoint, bucket):
    storage = WarehouseStorage(profile(s3_endpoint, bucket), credential(), LOOPBACK)
    assert storage.is_empty(f"s3://{bucket}/wh/t1")
    storage.write_metadata(f"s3://{bucket}/wh/t1/metadata/v1.metadata.json", DOCUMENT)
    assert not storage.is_empty(f"s3://{bucket}/wh/t1")
    assert not storage.is_empty(f"s3://{bucket}/wh/t1/")
    assert not storage.is_empty(f"s3://{bucket}/wh/t1/metadata/v1.metadata.json")
    assert storage.is_empty(f"s3://{bucket}/wh/t")  # a sibling prefix is not "inside"
    assert storage.is_empty(f"s3://{bucket}/wh/t1/data")


def test_warehouse_storage_lists_files_relative_to_a_location_by_whole_segments_on_s3(s3_endpoint, bucket):
    storage = WarehouseStorage(profile(s3_endpoint, bucket), credential(), LOOPBACK)
    for name in ("t1/metadata/v1.metadata.json", "t1/data/a/b.parquet", "t10/metadata/other.metadata.json"):
        storage.write_metadata(f"s3://{bucket}/wh/{name}", DOCUMENT)
    assert sorted(storage.files_below(f"s3://{bucket}/wh/t1")) == ["data/a/b.parquet", "metadata/v1.metadata.json"]
    assert storage.files_below(f"s3://{bucket}/wh/t2") == []


def test_warehouse_storage_purges_everything_below_a_location_on_s3(s3_endpoint, bucket):
    storage = WarehouseStorage(profile(s3_endpoint, bucket), credential(), LOOPBACK)
    admin = s3_admin(s3_endpoint)
    for index in range(1001):  # more than one DeleteObjects batch
        admin.put_object(Bucket=bucket, Key=f"wh/t1/data/{index:05d}.parquet", Body=b"")
    storage.write_metadata(f"s3://{bucket}/wh/t1/metadata/v1.metadata.json", DOCUMENT)
    storage.write_metadata(f"s3://{bucket}/wh/t10/metadata/keep.metadata.json", DOCUMENT)
    storage.purge(f"s3://{bucket}/wh/t1")
    assert storage.is_empty(f"s3://{bucket}/wh/t1")
    assert object_keys(s3_endpoint, bucket) == ["wh/t10/metadata/keep.metadata.json"]
    storage.purge(f"s3://{bucket}/wh/nothing-here")


def test_warehouse_storage_reports_a_storage_error_when_bucket_is_missing(s3_endpoint):
    storage = WarehouseStorage(profile(s3_endpoint, "no-such-bucket-here"), credential(), LOOPBACK)
    with pytest.raises(StorageAccessError, match="NoSuchBucket"):
        storage.is_empty("s3://no-such-bucket-here/wh/t1")
    with pytest.raises(StorageAccessError, match="NoSuchBucket"):
        storage.purge("s3://no-such-bucket-here/wh/t1")


def test_warehouse_storage_refuses_s3_locations_without_an_s3_profile(tmp_path: Path):
    for location in ("s3://bucket/x", "gs://bucket/x", "abfss://container@account/x"):
        with pytest.raises(StorageAccessError, match="not in this warehouse's storage"):
            WarehouseStorage(FileProfile(location=str(tmp_path))).is_empty(location)


def test_warehouse_storage_refuses_another_bucket_before_any_io(s3_endpoint, bucket):
    storage = WarehouseStorage(profile(s3_endpoint, bucket), credential(), LOOPBACK)
    for location in (f"s3://other-{bucket}/x", f"s3a://{bucket}/x", f"file:///tmp/{bucket}"):
        with pytest.raises(StorageAccessError, match="not in this warehouse's storage"):
            storage.write_metadata(location, DOCUMENT)
        with pytest.raises(StorageAccessError, match="not in this warehouse's storage"):
            storage.read_metadata(location)


def test_pyiceberg_file_io_writes_data_under_the_key_prefix(s3_endpoint, bucket):
    storage = WarehouseStorage(profile(s3_endpoint, bucket, **{"key-prefix": "lake/wh"}), credential(), LOOPBACK)
    location = f"s3://{bucket}/lake/wh/t1/data/part-0.parquet"
    io = storage.file_io(location)
    table = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    with io.new_output(location).create() as stream:
        pq.write_table(table, stream)
    assert object_keys(s3_endpoint, bucket) == ["lake/wh/t1/data/part-0.parquet"]
    with io.new_input(location).open() as stream:
        assert pq.read_table(stream) == table


def test_warehouse_storage_reports_a_storage_error_when_a_metadata_write_fails(s3_endpoint):
    storage = WarehouseStorage(profile(s3_endpoint, "no-such-bucket-here"), credential(), LOOPBACK)
    with pytest.raises(
        StorageAccessError,
        match=r"Cannot write metadata file s3://no-such-bucket-here/wh/t1/metadata/v1\.metadata\.json",
    ):
        storage.write_metadata("s3://no-such-bucket-here/wh/t1/metadata/v1.metadata.json", DOCUMENT)


def test_pyiceberg_client_reads_server_files_with_only_the_client_config(s3_endpoint, bucket):
    shared = profile(s3_endpoint, bucket, **{"share-static-credentials-with-clients": True})
    location = f"s3://{bucket}/wh/t1/metadata/v1.metadata.json"
    WarehouseStorage(shared, credential(), LOOPBACK).write_metadata(location, DOCUMENT)
    client_io = load_file_io(client_config(shared, credential()), location)
    with client_io.new_input(location).open() as stream:
        assert stream.read() == msgspec.json.encode(DOCUMENT)
