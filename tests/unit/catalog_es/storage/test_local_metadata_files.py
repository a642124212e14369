"""A local warehouse's metadata files: a table's first makes its directories, a name is written once."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.profiles import FileProfile


def test_the_first_file_makes_its_directories_and_later_ones_land_beside_it(tmp_path: Path) -> None:
    storage = WarehouseStorage(FileProfile(location=str(tmp_path / "wh")))
    first, second = (f"file://{tmp_path}/wh/ns/t1/metadata/0000{n}.metadata.json" for n in (1, 2))

    storage.write_metadata(first, {"format-version": 2})
    storage.write_metadata(second, b'{"format-version":2,"n":2}')

    metadata = tmp_path / "wh" / "ns" / "t1" / "metadata"
    assert sorted(p.name for p in metadata.iterdir()) == ["00001.metadata.json", "00002.metadata.json"]
    assert msgspec.json.decode((metadata / "00001.metadata.json").read_bytes()) == {"format-version": 2}
    assert (metadata / "00002.metadata.json").read_bytes() == b'{"format-version":2,"n":2}'


def test_a_file_is_never_overwritten(tmp_path: Path) -> None:
    storage = WarehouseStorage(FileProfile(location=str(tmp_path / "wh")))
    location = f"file://{tmp_path}/wh/t1/metadata/00001.metadata.json"
    storage.write_metadata(location, b"{}")

    with pytest.raises(FileExistsError):
        storage.write_metadata(location, b'{"other":1}')
    assert (tmp_path / "wh" / "t1" / "metadata" / "00001.metadata.json").read_bytes() == b"{}"
