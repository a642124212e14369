"""The server's CPU per table commit, decided in-process (issue 19 §2): the long way against the cached one.

For a table with S snapshots, each round decides one fast append the way the commit handler does: before
(parse the stored document, apply, dump the whole new document) and now (the parsed model kept by metadata
location, apply, dump only what changed). Prints the best-of-5 CPU time per commit and the speed-up.

Run: `python -m tests.bench.bench_commit_path [--snapshots 10 100 1000] [--rounds 200]`.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Callable
from typing import Any

import msgspec

from catalog_es.metadata.commit_cache import document_after
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.tables import commit, metadata_to_json, new_metadata, parse_metadata

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": i, "name": f"c{i}", "type": "long", "required": False} for i in range(1, 21)],
}


def _append(metadata: Any, snapshot_id: int) -> list[dict[str, Any]]:
    snapshot: dict[str, Any] = {
        "snapshot-id": snapshot_id,
        "sequence-number": metadata.last_sequence_number + 1,
        "timestamp-ms": snapshot_id,
        "manifest-list": f"file:///w/t/metadata/snap-{snapshot_id}.avro",
        "summary": {"operation": "append", "added-data-files": "1", "added-records": "10"},
        "schema-id": 0,
    }
    if metadata.current_snapshot_id is not None:
        snapshot["parent-snapshot-id"] = metadata.current_snapshot_id
    return [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
    ]


def _table(snapshots: int) -> tuple[str, dict[str, Any]]:
    metadata = new_metadata(
        schema=SCHEMA,
        partition_spec=None,
        write_order=None,
        location="file:///w/t",
        properties={},
        table_uuid=uuid.uuid4(),
        last_updated_ms=1,
    )
    location = "file:///w/t/metadata/00000-a.metadata.json"
    for i in range(snapshots):
        metadata = commit(metadata, location, [], _append(metadata, 1_000 + i), now_ms=2_000 + i)
        location = f"file:///w/t/metadata/{i + 1:05d}-a.metadata.json"
    return location, metadata_to_json(metadata)


def _best_ms(step: Callable[[], None], rounds: int) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _ in range(rounds):
            step()
        best = min(best, (time.process_time() - started) / rounds)
    return best * 1000


def _round(snapshots: int, rounds: int) -> tuple[float, float, float]:
    """(document KB, before ms, now ms) for one table size."""
    location, document = _table(snapshots)
    cache = MetadataDocuments()
    counter = iter(range(10**9))

    def before() -> None:
        base = parse_metadata(document)
        metadata_to_json(commit(base, location, [], _append(base, 10**6 + next(counter)), now_ms=9))

    def now() -> None:
        base = cache.parse(location, document)
        updated = commit(base, location, [], _append(base, 10**6 + next(counter)), now_ms=9)
        document_after(base, document, updated)

    return len(msgspec.json.encode(document)) / 1024, _best_ms(before, rounds), _best_ms(now, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    print(f"{'snapshots':>9} | {'document KB':>11} | {'before ms':>9} | {'now ms':>7} | speed-up")
    for snapshots in args.snapshots:
        size, slow, fast = _round(snapshots, max(5, args.rounds * 10 // max(10, snapshots)))
        print(f"{snapshots:>9} | {size:>11.0f} | {slow:>9.3f} | {fast:>7.3f} | {slow / fast:.1f}x")


if __name__ == "__main__":
    main()
