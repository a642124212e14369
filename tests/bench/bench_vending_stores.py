"""Vending per store: a burst of concurrent loadTable-sized vending requests through the one credential vendor,
and how many credentials each store minted (counted at the store: moto's STS log, the SAS signer, the GCS exchange).

Run: `python -m tests.bench.bench_vending_stores [--burst 200] [--tables 5]`. Not a pytest module. S3 vends against
moto with IAM enforcement (real AssumeRole calls); ADLS signs its SAS with a shared key (no call leaves the process);
GCS exchanges through a stand-in for Google's STS (the one part that cannot run here), which counts its calls.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from catalog_es.storage.adls import AdlsProfile, AzureSharedKeyCredential
from catalog_es.storage.backends import StorageBackend
from catalog_es.storage.backends.adls import AdlsBackend
from catalog_es.storage.backends.gcs import GcsBackend
from catalog_es.storage.backends.s3 import S3Backend
from catalog_es.storage.gcs import GcsProfile, GcsServiceAccountKeyCredential
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import S3AccessKeyCredential, S3Profile
from catalog_es.storage.vendor import CredentialVendor
from tests.integration.s3_server import REGION, assume_role_calls, iam_store
from tests.unit.catalog_es.storage.test_vended_store_credentials import key_file

LOOPBACK = EndpointPolicy.from_setting("127.0.0.1")


async def _burst(vendor: CredentialVendor, backend: StorageBackend, locations: list[str], burst: int) -> float:
    """Seconds for `burst` requests per table location, all at once, two principals and both levels mixed in."""
    started = time.perf_counter()
    calls = [
        vendor.vend(backend, location, "read" if index % 4 else "read-write", f"user-{index % 2}")
        for location in locations
        for index in range(burst)
    ]
    await asyncio.gather(*calls)
    return time.perf_counter() - started


def _row(store: str, requests: int, minted: int, keys: int, seconds: float) -> str:
    return f"{store:<5} {requests:>9} {minted:>8} {keys:>10} {requests / seconds:>12.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--burst", type=int, default=200, help="concurrent requests per table")
    parser.add_argument("--tables", type=int, default=5)
    args = parser.parse_args()
    keys = args.tables * 4  # (table, level, principal): 2 levels x 2 principals per table
    requests = args.burst * args.tables
    print(f"{'store':<5} {'requests':>9} {'minted':>8} {'at most':>10} {'requests/s':>12}")

    with tempfile.TemporaryDirectory() as tmp, iam_store(Path(tmp)) as store:
        store.s3(store.admin).create_bucket(Bucket="bench-stores")
        s3_profile = S3Profile(
            bucket="bench-stores",
            region=REGION,
            endpoint=store.endpoint,
            path_style_access=True,
            sts_enabled=True,
            sts_role_arn=store.role_arn,
        )
        s3_key = S3AccessKeyCredential(
            credential_type="access-key", access_key_id=store.warehouse[0], secret_access_key=store.warehouse[1]
        )
        before = assume_role_calls(store)
        vendor = CredentialVendor()
        tables = [f"s3://bench-stores/wh/t{index}" for index in range(args.tables)]
        seconds = asyncio.run(_burst(vendor, S3Backend(s3_profile, s3_key, LOOPBACK), tables, args.burst))
        print(_row("s3", requests, assume_role_calls(store) - before, keys, seconds))

    adls_profile = AdlsProfile(account_name="acct", filesystem="lake", sas_enabled=True)
    shared = AzureSharedKeyCredential(credential_type="shared-access-key", key=base64.b64encode(b"k" * 64).decode())
    vendor = CredentialVendor()
    tables = [f"abfss://lake@acct.dfs.core.windows.net/wh/t{index}" for index in range(args.tables)]
    seconds = asyncio.run(_burst(vendor, AdlsBackend(adls_profile, shared, LOOPBACK), tables, args.burst))
    print(_row("adls", requests, vendor.cache.issued, keys, seconds))

    exchanges: list[Any] = []

    def exchange(source: Any, boundary: Any) -> tuple[str, datetime]:
        exchanges.append(boundary)
        time.sleep(0.05)  # Google's STS answers in tens of milliseconds
        return f"token-{len(exchanges)}", datetime.now(UTC) + timedelta(hours=1)

    google = GcsServiceAccountKeyCredential(credential_type="service-account-key", key=key_file()[0])
    gcs = GcsBackend(GcsProfile(bucket="lake", sts_enabled=True), google, LOOPBACK, exchange)
    tables = [f"gs://lake/wh/t{index}" for index in range(args.tables)]
    seconds = asyncio.run(_burst(CredentialVendor(), gcs, tables, args.burst))
    print(_row("gcs", requests, len(exchanges), keys, seconds))


if __name__ == "__main__":
    main()
