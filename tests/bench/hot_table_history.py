"""Give a benchmark table a history of N snapshots before the timed run, cheaply (one manifest list, batched commits).

A hot table lives long: its metadata carries hundreds of snapshots, and every pyiceberg append (and every
server-side rebase) does work linear in them. Seeding each table of a run, hot or separate, with the same
history compares the layouts at equal table age, so what differs is contention, not history. The seeded
snapshots are empty appends sharing one empty manifest list written in the table's metadata directory.
"""

from __future__ import annotations

import random
import time

import httpx
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.manifest import write_manifest_list

_PER_COMMIT = 100
_TOTALS = (
    "total-data-files",
    "total-delete-files",
    "total-records",
    "total-files-size",
    "total-position-deletes",
    "total-equality-deletes",
)
_ZERO_TOTALS = dict.fromkeys(_TOTALS, "0")


def seed_history(base_url: str, namespace: str, name: str, snapshots: int) -> None:
    """Commit `snapshots` empty appends to a fresh format-version 2 table through the REST API."""
    if snapshots <= 0:
        return
    url = f"{base_url}/namespaces/{namespace}/tables/{name}"
    with httpx.Client(timeout=60) as http:
        loaded = http.get(url)
        loaded.raise_for_status()
        location = loaded.json()["metadata"]["location"]
        manifest_list = f"{location}/metadata/snap-seed-{random.getrandbits(32)}.avro"
        rng, parent, now = random.Random(name), None, int(time.time() * 1000) - snapshots
        with write_manifest_list(
            format_version=2,
            output_file=PyArrowFileIO().new_output(manifest_list),
            snapshot_id=1,
            parent_snapshot_id=None,
            sequence_number=1,
            avro_compression="deflate",
        ) as writer:
            writer.add_manifests([])
        for start in range(0, snapshots, _PER_COMMIT):
            updates: list[dict[str, object]] = []
            requirement = {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}
            for sequence in range(start + 1, min(snapshots, start + _PER_COMMIT) + 1):
                snapshot_id = rng.getrandbits(62)
                snapshot = {
                    "snapshot-id": snapshot_id,
                    "sequence-number": sequence,
                    "timestamp-ms": now + sequence,
                    "manifest-list": manifest_list,
                    "summary": {"operation": "append", **_ZERO_TOTALS},
                    "schema-id": 0,
                }
                if parent is not None:
                    snapshot["parent-snapshot-id"] = parent
                updates.append({"action": "add-snapshot", "snapshot": snapshot})
                parent = snapshot_id
            updates.append({"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": parent})
            answer = http.post(url, json={"requirements": [requirement], "updates": updates})
            answer.raise_for_status()
