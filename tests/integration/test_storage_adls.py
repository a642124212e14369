"""ADLS Gen2 warehouse storage on Azurite (the Blob API; Azurite has no DFS API): access checks, metadata IO,
emptiness and purges confined to the table."""

from __future__ import annotations

import pytest

from catalog_es.errors import BadRequestError, InvalidLocationError, StorageAccessError
from catalog_es.storage.adls import AdlsProfile
from catalog_es.storage.backends import validate_access
from catalog_es.storage.files import ForeignLocationError, WarehouseStorage
from catalog_es.storage.outbound import EndpointNotAllowedError, EndpointPolicy
from catalog_es.storage.profiles import StorageCredential, decode_credential, decode_profile
from tests.integration.store_emulators import Azurite

LOOPBACK = EndpointPolicy(allowed_hosts=("127.0.0.1",))
DOCUMENT = {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "x"}


def credential(key: str) -> StorageCredential:
    return decode_credential({"type": "az", "credential-type": "shared-access-key", "key": key})


def profile(emulator: Azurite, filesystem: str, **fields: object) -> AdlsProfile:
    document = {
        "type": "adls",
        "account-name": emulator.account,
        "filesystem": filesystem,
        "endpoint": emulator.endpoint,
        **fields,
    }
    decoded = decode_profile(document)
    assert isinstance(decoded, AdlsProfile)
    return decoded


def base(emulator: Azurite, filesystem: str) -> str:
    return f"abfss://{filesystem}@{emulator.account}.dfs.core.windows.net"


def test_validate_access_succeeds_and_leaves_nothing_behind_when_filesystem_is_usable(azurite):
    filesystem = azurite.make_filesystem()
    validate_access(profile(azurite, filesystem, **{"key-prefix": "wh/one"}), credential(azurite.key), LOOPBACK)
    assert azurite.blobs(filesystem) == []


def test_validate_access_fails_with_safe_reason_when_key_is_wrong(azurite):
    filesystem = azurite.make_filesystem()
    with pytest.raises(StorageAccessError) as raised:
        validate_access(profile(azurite, filesystem), credential("d3Jvbmcta2V5"), LOOPBACK)
    assert isinstance(raised.value, BadRequestError)
    assert filesystem in str(raised.value)
    assert "(HTTP 403)" in str(raised.value)


def test_validate_access_fails_when_filesystem_is_missing(azurite):
    with pytest.raises(StorageAccessError, match="HTTP 404"):
        validate_access(profile(azurite, "no-such-filesystem"), credential(azurite.key), LOOPBACK)


def test_validate_access_refuses_endpoint_before_connecting_when_not_allowed(azurite):
    filesystem = azurite.make_filesystem()
    with pytest.raises(EndpointNotAllowedError):
        validate_access(profile(azurite, filesystem), credential(azurite.key), EndpointPolicy())


def test_validate_access_refuses_credential_of_another_store_when_profile_is_adls(azurite):
    s3_key = decode_credential(
        {"type": "s3", "credential-type": "access-key", "access-key-id": "a", "secret-access-key": "b"}
    )
    with pytest.raises(BadRequestError, match="cannot use a 's3' credential"):
        validate_access(profile(azurite, azurite.make_filesystem()), s3_key, LOOPBACK)


def test_metadata_is_written_read_and_never_overwritten_when_location_is_in_warehouse(azurite):
    filesystem = azurite.make_filesystem()
    storage = WarehouseStorage(profile(azurite, filesystem, **{"key-prefix": "wh"}), credential(azurite.key), LOOPBACK)
    location = f"{base(azurite, filesystem)}/wh/ns/t/metadata/00000-a.metadata.json"
    storage.write_metadata(location, DOCUMENT)
    assert storage.read_metadata(location) == DOCUMENT
    assert azurite.blobs(filesystem) == ["wh/ns/t/metadata/00000-a.metadata.json"]
    with pytest.raises(FileExistsError):
        storage.write_metadata(location, {**DOCUMENT, "location": "y"})
    assert storage.read_metadata(location) == DOCUMENT


def test_wasbs_spelling_reads_same_blob_when_alternative_protocols_are_allowed(azurite):
    filesystem = azurite.make_filesystem()
    fields = {"allow-alternative-protocols": True}
    storage = WarehouseStorage(profile(azurite, filesystem, **fields), credential(azurite.key), LOOPBACK)
    storage.write_metadata(f"{base(azurite, filesystem)}/t/m.metadata.json", DOCUMENT)
    wasbs = f"wasbs://{filesystem}@{azurite.account}.blob.core.windows.net/t/m.metadata.json"
    assert storage.read_metadata(wasbs) == DOCUMENT
    strict = WarehouseStorage(profile(azurite, filesystem), credential(azurite.key), LOOPBACK)
    with pytest.raises(ForeignLocationError):
        strict.read_metadata(wasbs)


def test_locations_outside_the_warehouse_are_refused_before_any_io(azurite):
    filesystem = azurite.make_filesystem()
    storage = WarehouseStorage(profile(azurite, filesystem, **{"key-prefix": "wh"}), credential(azurite.key), LOOPBACK)
    for foreign in (
        f"abfss://other@{azurite.account}.dfs.core.windows.net/wh/t/m.json",
        f"abfss://{filesystem}@otheraccount.dfs.core.windows.net/wh/t/m.json",
        "s3://bucket/wh/t/m.json",
    ):
        with pytest.raises(ForeignLocationError):
            storage.write_metadata(foreign, DOCUMENT)
    with pytest.raises(InvalidLocationError):
        storage.write_metadata(f"{base(azurite, filesystem)}/elsewhere/m.json", DOCUMENT)
    assert azurite.blobs(filesystem) == []


def test_purge_removes_only_the_table_when_a_sibling_shares_its_name_prefix(azurite):
    filesystem = azurite.make_filesystem()
    storage = WarehouseStorage(profile(azurite, filesystem), credential(azurite.key), LOOPBACK)
    root = base(azurite, filesystem)
    for name in ("t/metadata/a.json", "t/data/x.parquet", "t2/metadata/a.json", "t-other.json"):
        storage.write_metadata(f"{root}/{name}", DOCUMENT)
    assert not storage.is_empty(f"{root}/t")
    assert sorted(storage.files_below(f"{root}/t")) == ["data/x.parquet", "metadata/a.json"]
    storage.purge(f"{root}/t")
    assert storage.is_empty(f"{root}/t")
    assert azurite.blobs(filesystem) == ["t-other.json", "t2/metadata/a.json"]
    assert storage.is_empty(f"{root}/never-written")
