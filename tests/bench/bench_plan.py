"""Scan planning (issue 33): pyiceberg client-side planning vs the catalog's server-side plans, cold and cached.

A local file warehouse gets one unpartitioned table with 10,000 data files in 500 manifests (20 files each),
written directly with pyiceberg's manifest writers (entries only: planning never opens a data file). Each file
covers a distinct `id` range (its lower/upper bounds), so a selective filter (`id` in a range covering ~10 files)
prunes on column metrics: the client must read every manifest, the server does it for the client.

Printed: pyiceberg `plan_files()` with client-side planning (fresh catalog each round), server-side cold (a new
filter each round, nothing cached) and cached (the same request again), each p50 of `--rounds`; the files
planned; and the bytes the client downloads either way (client: manifest list + manifests; server: the plan
response). Run: `python -m tests.bench.bench_plan [--files 10000] [--manifests 500] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.typedef import Record
from pyiceberg.types import LongType, NestedField, StringType

from tests.e2e.conftest import start_catalog, stop_catalog
from tests.planning_tables import commit_manifests, data_manifest, new_snapshot_id, synthetic_data_file

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False))
ROWS_PER_FILE = 1000


def _build(catalog: Catalog, files: int, manifests: int) -> Table:
    catalog.create_namespace("bench")
    table = catalog.create_table("bench.plans", schema=SCHEMA, properties={"format-version": "2"})
    per_manifest = files // manifests
    snapshot_id = new_snapshot_id()
    written = []
    for manifest in range(manifests):
        entries = []
        for index in range(per_manifest):
            number = manifest * per_manifest + index
            low, high = number * ROWS_PER_FILE, number * ROWS_PER_FILE + ROWS_PER_FILE - 1
            bounds = {1: (struct.pack("<q", low), struct.pack("<q", high)), 2: (b"a", b"z")}
            path = f"{table.location()}/data/f-{number:05d}.parquet"
            entries.append(synthetic_data_file(path, Record(), ROWS_PER_FILE, bounds))
        written.append(data_manifest(table, snapshot_id, entries))
    commit_manifests(table, written, snapshot_id=snapshot_id)
    return catalog.load_table("bench.plans")


def _timed(action: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    count = action()
    return time.perf_counter() - start, count


def _selective(round_number: int, files: int) -> And:
    """About 10 files' ids, somewhere else each round (so a cold round finds nothing cached)."""
    first = (round_number * 997) % (files - 20)
    return And(GreaterThanOrEqual("id", first * ROWS_PER_FILE + 10), LessThan("id", (first + 10) * ROWS_PER_FILE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--manifests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-plan-"))
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
    env.pop("CATALOG_ES__PG_DSN", None)
    server = start_catalog(root / "data", env)
    try:
        uri = server.catalog_uri
        started = time.perf_counter()
        table = _build(load_catalog("w", type="rest", uri=uri, warehouse="demo"), args.files, args.manifests)
        print(f"built {args.files} files in {args.manifests} manifests in {time.perf_counter() - started:.1f} s")
        snapshot = table.current_snapshot()
        assert snapshot is not None
        manifest_bytes = sum(manifest.manifest_length for manifest in snapshot.manifests(table.io))
        list_bytes = os.path.getsize(snapshot.manifest_list.removeprefix("file://"))

        client, cold, cached, planned = [], [], [], set()
        for round_number in range(args.rounds):
            row_filter = _selective(round_number, args.files)
            local = load_catalog(f"c{round_number}", type="rest", uri=uri, warehouse="demo").load_table("bench.plans")
            seconds, count = _timed(lambda: len(list(local.scan(row_filter=row_filter).plan_files())))  # noqa: B023
            client.append(seconds)
            remote_catalog = load_catalog(
                f"s{round_number}", type="rest", uri=uri, warehouse="demo", **{"scan-planning-mode": "server"}
            )
            remote = remote_catalog.load_table("bench.plans")
            seconds, server_count = _timed(lambda: len(list(remote.scan(row_filter=row_filter).plan_files())))  # noqa: B023
            cold.append(seconds)
            seconds, again = _timed(lambda: len(list(remote.scan(row_filter=row_filter).plan_files())))  # noqa: B023
            cached.append(seconds)
            assert count == server_count == again, (count, server_count, again)
            planned.add(count)

        with httpx.Client(base_url=f"{uri}/v1/", timeout=60) as http:
            prefix = http.get("config", params={"warehouse": "demo"}).json()["defaults"]["prefix"]
            body = {"filter": _selective(0, args.files).model_dump(mode="json", by_alias=True)}
            response = http.post(f"{prefix}/namespaces/bench/tables/plans/plan", json=body)
            response.raise_for_status()
            plan_bytes = len(response.content)

        p50 = statistics.median
        print(f"files planned per scan: {sorted(planned)} of {args.files}")
        print(f"client-side planning (pyiceberg 0.12):  p50 {p50(client) * 1000:8.1f} ms  {_ms(client)}")
        print(f"server-side, cold:                      p50 {p50(cold) * 1000:8.1f} ms  {_ms(cold)}")
        print(f"server-side, cached:                    p50 {p50(cached) * 1000:8.1f} ms  {_ms(cached)}")
        print(f"cached server plan vs client-side:      {p50(client) / p50(cached):.1f}x faster")
        client_kib = (list_bytes + manifest_bytes) / 1024
        print(f"client downloads, client-side: {client_kib:,.0f} KiB (manifest list + manifests)")
        print(f"client downloads, server-side: {plan_bytes / 1024:,.1f} KiB (the plan response)")
    finally:
        stop_catalog(server)


def _ms(values: list[float]) -> str:
    return "[" + ", ".join(f"{value * 1000:.0f}" for value in values) + "] ms"


if __name__ == "__main__":
    main()
