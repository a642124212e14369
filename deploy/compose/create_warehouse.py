"""Create the compose stack's S3 warehouse on MinIO through the catalog's management API (once)."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

ATTEMPTS = 30


def _request(method: str, url: str, body: dict[str, object] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})  # noqa: S310 - the compose network's catalog
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _warehouse(name: str) -> dict[str, object]:
    """Static MinIO keys shared with clients: a local demo, so Spark needs no keys of its own."""
    return {
        "warehouse-name": name,
        "storage-profile": {
            "type": "s3",
            "bucket": os.environ["WAREHOUSE_BUCKET"],
            "key-prefix": name,
            "region": "us-east-1",
            "endpoint": os.environ["S3_ENDPOINT"],
            "path-style-access": True,
            "flavor": "minio",
            "share-static-credentials-with-clients": True,
        },
        "storage-credential": {
            "type": "s3",
            "credential-type": "access-key",
            "aws-access-key-id": os.environ["S3_ACCESS_KEY_ID"],
            "aws-secret-access-key": os.environ["S3_SECRET_ACCESS_KEY"],
        },
    }


def main() -> int:
    base, name = os.environ["CATALOG_URL"].rstrip("/"), os.environ["WAREHOUSE_NAME"]
    for _ in range(ATTEMPTS):  # the proxy may still be starting
        try:
            status, listing = _request("GET", f"{base}/management/v1/warehouse")
        except (urllib.error.URLError, ConnectionError):
            time.sleep(2)
            continue
        if status != 200:
            print(f"listing warehouses failed: {status} {listing}", file=sys.stderr)
            return 1
        if name in {warehouse["name"] for warehouse in listing["warehouses"]}:
            print(f"warehouse {name!r} exists")
            return 0
        status, answer = _request("POST", f"{base}/management/v1/warehouse", _warehouse(name))
        print(f"create warehouse {name!r}: {status} {answer}", file=sys.stdout if status < 300 else sys.stderr)
        return 0 if status < 300 else 1
    print(f"the catalog at {base} did not answer", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
