"""Manifest lists assembled from cached record encodings equal pyiceberg's own, for every format version."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import UNASSIGNED_SEQ, ManifestContent, ManifestFile, PartitionFieldSummary

from catalog_es.metadata.manifest_row_ids import first_row_id
from catalog_es.storage.manifest_list_records import EncodedManifestRecords
from catalog_es.storage.manifest_lists import read_manifest_list, write_manifest_list

IO = PyArrowFileIO()
SNAPSHOT = 900


def listed(count: int, version: int, new: int = 1) -> list[ManifestFile]:
    """`count` manifests of earlier snapshots (sequence numbers assigned) then `new` of this one (unassigned)."""
    manifests = []
    for i in range(count + new):
        own = i >= count
        sequence = UNASSIGNED_SEQ if own and version > 1 else i + 1
        manifests.append(
            ManifestFile.from_args(
                _table_format_version=3 if version == 3 else 2,
                manifest_path=f"file:///w/t/metadata/m{i}.avro",
                manifest_length=4000 + i,
                partition_spec_id=0,
                content=ManifestContent.DATA,
                sequence_number=sequence,
                min_sequence_number=sequence,
                added_snapshot_id=SNAPSHOT if own else 100 + i,
                added_files_count=1,
                existing_files_count=0,
                deleted_files_count=0,
                added_rows_count=10 + i,
                existing_rows_count=0,
                deleted_rows_count=0,
                partitions=[
                    PartitionFieldSummary(False, False, i.to_bytes(4, "little"), (i + 9).to_bytes(4, "little"))
                ],
                key_metadata=None,
                **({"first_row_id": None if own else 10 * i} if version == 3 else {}),
            )
        )
    return manifests


def write(path: Path, version: int, manifests: list[ManifestFile], records: EncodedManifestRecords | None) -> None:
    with write_manifest_list(
        format_version=version,
        output_file=IO.new_output(str(path)),
        snapshot_id=SNAPSHOT,
        parent_snapshot_id=SNAPSHOT - 1,
        sequence_number=50,
        first_row_id=5000 if version == 3 else None,
        avro_compression="deflate",
    ) as writer:
        if records is None:
            writer.add_manifests(manifests)
        else:
            records.add_manifests(writer, version, manifests)


def content(path: Path, version: int) -> list[tuple[object, ...]]:
    """Every value of every record read back (partition summaries as tuples), v3's row id last."""
    return [
        (*(_plain(m[position]) for position in range(14)), first_row_id(m) if version == 3 else None)
        for m in read_manifest_list(IO.new_input(str(path)), version)
    ]


def _plain(value: object) -> object:
    if isinstance(value, list):
        return [tuple(summary[i] for i in range(len(summary))) for summary in value]
    return value


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_list_from_cached_records_reads_as_pyiceberg_writes_it_and_reuses_the_heads_records(
    tmp_path: Path, version: int
) -> None:
    records = EncodedManifestRecords(capacity=1000)
    write(tmp_path / "plain.avro", version, listed(30, version), None)
    write(tmp_path / "first.avro", version, listed(30, version), records)
    assert records.hits == 0

    write(tmp_path / "again.avro", version, listed(30, version), records)

    expected = content(tmp_path / "plain.avro", version)
    assert content(tmp_path / "first.avro", version) == expected
    assert content(tmp_path / "again.avro", version) == expected
    assert records.hits == 31  # every record of the second list, the new one included (same values)
    if version > 1:
        assert [row[4] for row in expected][-1] == 50  # the new manifest's sequence number was assigned


def test_a_record_differing_in_a_sequence_number_or_count_is_encoded_afresh(tmp_path: Path) -> None:
    records = EncodedManifestRecords(capacity=1000)
    write(tmp_path / "first.avro", 2, listed(3, 2), records)
    changed = listed(3, 2)
    changed[0].sequence_number = 7
    changed[1][10] = 99  # position 10: added_rows_count

    write(tmp_path / "second.avro", 2, changed, records)

    assert records.hits == 2  # the unchanged third and the new one
    assert [row[4] for row in content(tmp_path / "second.avro", 2)][:3] == [7, 2, 3]
    assert [row[10] for row in content(tmp_path / "second.avro", 2)][:3] == [10, 99, 12]


def test_the_cache_stays_within_its_capacity(tmp_path: Path) -> None:
    records = EncodedManifestRecords(capacity=5)
    write(tmp_path / "list.avro", 2, listed(20, 2), records)
    assert len(records._encoded) == 5
    assert len(content(tmp_path / "list.avro", 2)) == 21
