"""Vended-credentials benchmark: STS AssumeRole calls per 1,000 loadTable under concurrent load, counted at the STS
endpoint (moto with IAM enforcement), with `X-Iceberg-Access-Delegation: vended-credentials` on every request.

Run: `python -m tests.bench.bench_vended_credentials [--loads 5000] [--clients 16] [--tables 20] [--validity 900]`.
Not a pytest module. Starts an embedded PostgreSQL (or uses CATALOG_ES_TEST_PG_DSN), moto and `catalog-es serve`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from catalog_es.store.secrets import generate_secrets_key
from tests.bench.bench_relay import _fresh_database, _percentile
from tests.e2e.conftest import start_catalog, stop_catalog
from tests.integration.s3_server import REGION, IamStore, assume_role_calls, iam_store

VENDED = {"X-Iceberg-Access-Delegation": "vended-credentials"}
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _warehouse(http: httpx.Client, store: IamStore, validity: int) -> str:
    bucket = "bench-vended"
    store.s3(store.admin).create_bucket(Bucket=bucket)
    profile = {
        "type": "s3",
        "bucket": bucket,
        "region": REGION,
        "endpoint": store.endpoint,
        "path-style-access": True,
        "sts-enabled": True,
        "sts-role-arn": store.role_arn,
        "sts-token-validity-seconds": validity,
    }
    credential = {
        "type": "s3",
        "credential-type": "access-key",
        "aws-access-key-id": store.warehouse[0],
        "aws-secret-access-key": store.warehouse[1],
    }
    body = {"warehouse-name": "bench", "storage-profile": profile, "storage-credential": credential}
    http.post("/management/v1/warehouse", json=body).raise_for_status()
    prefix: str = http.get("/catalog/v1/config", params={"warehouse": "bench"}).json()["defaults"]["prefix"]
    return prefix


def _tables(http: httpx.Client, prefix: str, tables: int) -> list[str]:
    http.post(f"/catalog/v1/{prefix}/namespaces", json={"namespace": ["bench"]}).raise_for_status()
    paths = []
    for index in range(tables):
        created = http.post(
            f"/catalog/v1/{prefix}/namespaces/bench/tables", json={"name": f"t{index}", "schema": SCHEMA}
        )
        created.raise_for_status()
        paths.append(f"/catalog/v1/{prefix}/namespaces/bench/tables/t{index}")
    return paths


async def _load(
    base_url: str, paths: list[str], loads: int, clients: int, headers: dict[str, str]
) -> tuple[list[float], dict[int, int], float]:
    """`loads` loadTable requests spread round-robin over the tables by `clients` concurrent connections; the
    latencies of the answers with credentials (or of every 200 without the header) and the count of the others
    by status."""
    latencies: list[float] = []
    failures: dict[int, int] = {}
    counter = iter(range(loads))

    async def client(http: httpx.AsyncClient) -> None:
        for index in counter:
            start = time.perf_counter()
            answer = await http.get(paths[index % len(paths)], headers=headers)
            if answer.status_code != 200 or (headers and "s3.session-token" not in answer.json()["config"]):
                failures[answer.status_code] = failures.get(answer.status_code, 0) + 1
            else:
                latencies.append((time.perf_counter() - start) * 1000)

    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as http:
        began = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        return latencies, failures, time.perf_counter() - began


def _report(
    label: str, store: IamStore, before: int, latencies: list[float], failures: dict[int, int], elapsed: float
) -> int:
    calls, total = assume_role_calls(store) - before, len(latencies) + sum(failures.values())
    print(
        f"{label}: {total:,} loadTable in {elapsed:.1f} s ({total / elapsed:,.0f}/s), "
        f"{calls} STS AssumeRole calls = {calls * 1000 / total:.2f} per 1,000 loadTable; "
        f"p50 {statistics.median(latencies):.1f} ms, p99 {_percentile(latencies, 0.99):.1f} ms; "
        f"failed: {failures or 'none'}"
    )
    return calls


def main(loads: int, clients: int, tables: int, validity: int) -> None:
    with tempfile.TemporaryDirectory(prefix="catalog-es-bench-") as directory:
        work = Path(directory)
        dsn = _fresh_database(work)
        with iam_store(work) as store:
            env = {
                **os.environ,
                "CATALOG_ES__PG_DSN": dsn,
                "CATALOG_ES__SECRETS_KEY": generate_secrets_key(),
                "CATALOG_ES__NATS__ENABLED": "false",
            }
            server = start_catalog(work / "data", env)
            try:
                with httpx.Client(base_url=server.base_url, timeout=60) as http:
                    prefix = _warehouse(http, store, validity)
                    paths = _tables(http, prefix, tables)
                print(
                    f"vended credentials: {tables} tables, {clients} concurrent clients, "
                    f"token validity {validity} s, one principal (anonymous, allowall)"
                )
                for label, headers in (("cold cache", VENDED), ("warm cache", VENDED), ("no delegation header", {})):
                    before = assume_role_calls(store)
                    latencies, failures, elapsed = asyncio.run(_load(server.base_url, paths, loads, clients, headers))
                    calls = _report(label, store, before, latencies, failures, elapsed)
                    if label == "cold cache" and calls > tables:
                        raise SystemExit(f"{calls} STS calls for {tables} tables: the cache did not hold")
            finally:
                stop_catalog(server)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loads", type=int, default=5000, help="loadTable requests per phase")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--validity", type=int, default=900, help="sts-token-validity-seconds")
    arguments = parser.parse_args()
    main(arguments.loads, arguments.clients, arguments.tables, arguments.validity)
