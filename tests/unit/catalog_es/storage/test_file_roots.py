"""File storage roots: where `file` warehouses may live, compared by resolved whole path segments."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.settings import load_settings
from catalog_es.errors import BadRequestError, InvalidLocationError
from catalog_es.storage.file_roots import FileStorageRoots, storage_overlaps, within
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.profiles import FileProfile
from catalog_es.storage.purge import remove_empty_directories


def test_within_compares_whole_path_segments():
    assert within("/srv/lake", "/srv/lake")
    assert within("/srv/lake/wh", "/srv/lake")
    assert not within("/srv/lakehouse", "/srv/lake")
    assert not within("/srv", "/srv/lake")


def test_check_refuses_every_location_when_no_root_is_configured(tmp_path: Path):
    with pytest.raises(BadRequestError, match="CATALOG_ES__FILE_STORAGE_ROOTS"):
        FileStorageRoots.of([], None).check(str(tmp_path / "wh"))


def test_check_accepts_a_location_below_a_root_in_any_spelling(tmp_path: Path):
    roots = FileStorageRoots.of([str(tmp_path / "lake")], None)
    for location in [f"{tmp_path}/lake/wh", f"file:{tmp_path}/lake/wh/", f"file://{tmp_path}//lake/wh"]:
        assert roots.check(location) == str((tmp_path / "lake" / "wh").resolve())


def test_check_refuses_a_location_outside_every_root(tmp_path: Path):
    roots = FileStorageRoots.of([str(tmp_path / "lake")], None)
    for location in ["/etc", f"{tmp_path}/lakehouse", str(tmp_path)]:
        with pytest.raises(BadRequestError, match="outside the server's file storage roots"):
            roots.check(location)


def test_check_refuses_a_location_when_a_symlink_leads_out_of_the_root(tmp_path: Path):
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "escape").symlink_to("/etc")
    with pytest.raises(BadRequestError, match="outside the server's file storage roots"):
        FileStorageRoots.of([str(tmp_path / "lake")], None).check(f"{tmp_path}/lake/escape/wh")


def test_check_refuses_the_data_dir_and_its_contents_but_its_warehouse_directory(tmp_path: Path):
    data = tmp_path / "data"
    roots = FileStorageRoots.of([str(tmp_path)], str(data))
    for location in [data, data / "pg", data / "secrets.key", data / "nats" / "x"]:
        with pytest.raises(BadRequestError, match="server's own data directory"):
            roots.check(str(location))
    assert roots.check(str(data / "warehouse" / "demo")) == str((data / "warehouse" / "demo").resolve())


def test_check_refuses_an_ancestor_of_the_data_dir_even_below_a_root(tmp_path: Path):
    roots = FileStorageRoots.of(["/"], str(tmp_path / "srv" / "data"))
    with pytest.raises(BadRequestError, match="server's own data directory"):
        roots.check(str(tmp_path / "srv"))


def test_roots_must_be_absolute_paths():
    with pytest.raises(ValueError, match="absolute"):
        FileStorageRoots.of(["relative/dir"], None)


def test_storage_overlaps_sees_a_symlinked_alias_of_another_location(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "a")
    assert storage_overlaps(f"file://{tmp_path}/a", f"{tmp_path}/alias/x")
    assert not storage_overlaps(f"file://{tmp_path}/a", f"file://{tmp_path}/ab")
    assert storage_overlaps("s3://bucket/wh", "s3://bucket/wh/x/")
    assert not storage_overlaps("s3://bucket/wh", f"file://{tmp_path}/a")


def test_settings_default_roots_are_the_data_dirs_warehouse_in_embedded_mode_and_none_with_a_database(
    tmp_path: Path,
):
    embedded = load_settings({}, data_dir=str(tmp_path))
    assert embedded.file_roots.roots == (str((tmp_path / "warehouse").resolve()),)
    embedded.file_roots.check(embedded.default_warehouse_location)
    external = load_settings({"CATALOG_ES__PG_DSN": "postgresql://db/catalog"}, data_dir=str(tmp_path))
    assert external.file_roots.roots == ()
    configured = load_settings(
        {"CATALOG_ES__PG_DSN": "postgresql://db/catalog", "CATALOG_ES__FILE_STORAGE_ROOTS": "/srv/a, /srv/b"}
    )
    assert configured.file_roots.roots == ("/srv/a", "/srv/b")


def test_warehouse_storage_refuses_locations_outside_its_warehouse_before_any_io(tmp_path: Path):
    (tmp_path / "wh").mkdir()
    (tmp_path / "wh" / "out").symlink_to(tmp_path)
    storage = WarehouseStorage(FileProfile(location=str(tmp_path / "wh")))
    assert storage.confined(f"{tmp_path}/wh/t1") == f"file://{tmp_path}/wh/t1"
    for location in ["s3://bucket/wh/t1", f"{tmp_path}/other", f"{tmp_path}/wh/out/t1"]:
        with pytest.raises(InvalidLocationError):
            storage.write_metadata(f"{location}/metadata/v1.metadata.json", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wh"]


def test_remove_empty_directories_keeps_every_directory_that_holds_a_file(tmp_path: Path):
    (tmp_path / "t" / "metadata").mkdir(parents=True)
    (tmp_path / "t" / "data" / "x").mkdir(parents=True)
    (tmp_path / "t" / "data" / "keep.txt").write_text("kept")
    remove_empty_directories(str(tmp_path / "t"))
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["t", "t/data", "t/data/keep.txt"]
