"""`catalog-es import` of a pyiceberg SQL catalog with N tables (issue 32's goal: 1,000 tables in under a minute).

Makes an embedded catalog in a temporary data dir (migrate + the `demo` warehouse), a sqlite SQL catalog whose N
tables (one snapshot each) lie in the warehouse, then times `catalog-es import` and a re-run (nothing to do), and
prints the figures. `python -m tests.bench.bench_import [--tables N]`.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

CLI = [sys.executable, "-m", "api"]


def _serve(data: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`catalog-es serve` on the data dir (embedded PostgreSQL, the `demo` warehouse); the import joins its database."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [*CLI, "serve", "--data-dir", str(data), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("catalog-es serve did not become healthy")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=1000)
    args = parser.parse_args()
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true", "CATALOG_ES__NATS__ENABLED": "false"}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as work:
        data = Path(work) / "data"
        server = _serve(data, env)
        inside = data / "warehouse" / "demo" / "source"
        props = {"type": "sql", "uri": f"sqlite:///{work}/source.db", "warehouse": inside.as_uri()}
        source = load_catalog("bench", **props)
        source.create_namespace("bench")
        schema = Schema(NestedField(1, "id", LongType(), required=False))
        rows = pa.table({"id": pa.array([1], type=pa.int64())})
        started = time.monotonic()
        for index in range(args.tables):
            source.create_table(f"bench.t{index:05d}", schema).append(rows)
        made = time.monotonic() - started
        command = [*CLI, "import", "--data-dir", str(data), "--warehouse", "demo", "--catalog-name", "bench"]
        command += [arg for key, value in props.items() for arg in ("--source", f"{key}={value}")]
        figures = {}
        try:
            for run in ("first import", "re-run (nothing new)"):
                started = time.monotonic()
                subprocess.run(command, env=env, check=True, capture_output=True)
                figures[run] = time.monotonic() - started
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(f"source: {args.tables} tables with one snapshot each (made in {made:.1f} s)")
    for run, seconds in figures.items():
        print(f"{run}: {seconds:.1f} s ({args.tables / seconds:.0f} tables/s, including the CLI's start)")


if __name__ == "__main__":
    main()
