"""Which files below a table's new location its committed metadata names (with Hadoop's checksum sidecars)."""

from __future__ import annotations

from catalog_es.storage.purge import checksum_sidecar, unreferenced

ROOT = "s3://b/wh/t"


def test_checksum_sidecar_is_the_dotted_crc_beside_the_file():
    assert checksum_sidecar("data/a.parquet") == "data/.a.parquet.crc"
    assert checksum_sidecar("a.parquet") == ".a.parquet.crc"


def test_unreferenced_leaves_only_files_no_reference_names_when_sidecars_lie_beside_them():
    files = ["data/a.parquet", "data/.a.parquet.crc", "metadata/snap-1.avro", "data/b.parquet", ".b.parquet.crc"]
    references = [f"{ROOT}/data/a.parquet", f"{ROOT}/metadata/snap-1.avro", "s3://b/wh/other/data/b.parquet"]
    assert unreferenced(files, references, ROOT) == [".b.parquet.crc", "data/b.parquet"]


def test_unreferenced_does_not_take_a_sibling_with_the_same_name_prefix_for_the_root():
    assert unreferenced(["x.parquet"], ["s3://b/wh/t2/x.parquet"], ROOT) == ["x.parquet"]
