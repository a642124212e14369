"""A real S3 API for tests: moto's server mode in a subprocess on a free loopback port.

Tests create their buckets with `make_bucket(endpoint)`; moto accepts any access key pair.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import httpx
import msgspec
import pytest
from botocore.config import Config

REGION = "us-east-1"
ACCESS_KEY_ID = "catalog-es-test-key"
SECRET_ACCESS_KEY = "catalog-es-test-secret"  # moto accepts any pair


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with {process.returncode}: {log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"moto server did not listen on {port}: {log.read_text()}")


def s3_admin(endpoint: str) -> Any:
    """A boto3 client on the test server, path style, with the test keys."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        config=Config(s3={"addressing_style": "path"}),
    )


def make_bucket(endpoint: str) -> str:
    """A new, empty bucket with a unique name."""
    name = f"test-{uuid.uuid4().hex[:16]}"
    s3_admin(endpoint).create_bucket(Bucket=name)
    return name


def object_keys(endpoint: str, bucket: str, prefix: str = "") -> list[str]:
    pages = s3_admin(endpoint).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a moto S3 server for the whole run (`http://127.0.0.1:<port>`)."""
    port = _free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with log.open("wb") as output:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class IamStore(msgspec.Struct, frozen=True):
    """A moto server enforcing IAM: an admin's keys, and a warehouse user's that may use S3 and assume `role_arn`."""

    endpoint: str
    admin: tuple[str, str]
    warehouse: tuple[str, str]
    role_arn: str
    assume_role_log: Path

    def s3(self, keys: tuple[str, str], token: str | None = None) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=keys[0],
            aws_secret_access_key=keys[1],
            aws_session_token=token,
            config=Config(s3={"addressing_style": "path"}),
        )


_ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def _iam_user(iam: Any, name: str, policy: dict[str, Any]) -> tuple[str, tuple[str, str]]:
    arn = iam.create_user(UserName=name)["User"]["Arn"]
    iam.put_user_policy(UserName=name, PolicyName=f"{name}-policy", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return arn, (key["AccessKeyId"], key["SecretAccessKey"])


def _set_up_iam(endpoint: str, assume_role_log: Path) -> IamStore:
    """Users and the role, made while moto still lets every request through; then enforcement is switched on
    (moto's `INITIAL_NO_AUTH_ACTION_COUNT`, set to 0 through its `/moto-api/reset-auth` route)."""
    iam = boto3.client(
        "iam", endpoint_url=endpoint, region_name=REGION, aws_access_key_id="setup", aws_secret_access_key="setup"
    )
    _, admin = _iam_user(iam, "admin", _ALLOW_ALL)
    warehouse_policy = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
            {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "arn:aws:iam::*:role/vended"},
        ],
    }
    warehouse_arn, warehouse = _iam_user(iam, "warehouse", warehouse_policy)
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": warehouse_arn}, "Action": "sts:AssumeRole"}],
    }
    role_arn = iam.create_role(RoleName="vended", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    role_policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_role_policy(RoleName="vended", PolicyName="s3", PolicyDocument=json.dumps(role_policy))
    httpx.post(f"{endpoint}/moto-api/reset-auth", content=b"0", timeout=10).raise_for_status()
    return IamStore(
        endpoint=endpoint, admin=admin, warehouse=warehouse, role_arn=role_arn, assume_role_log=assume_role_log
    )


@contextmanager
def iam_store(log_dir: Path) -> Iterator[IamStore]:
    """A moto S3/STS/IAM server of its own that refuses unsigned, unknown and out-of-policy requests, session
    policies included (`moto_iam_server.py`); stopped on exit."""
    port = _free_port()
    log, calls = log_dir / "moto-iam.log", log_dir / "assume-role.log"
    calls.touch()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("moto_iam_server.py")), "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "MOTO_ASSUME_ROLE_LOG": str(calls)},
        )
    try:
        _wait_for_port(port, process, log)
        yield _set_up_iam(f"http://127.0.0.1:{port}", calls)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def assume_role_calls(store: IamStore) -> int:
    """How many AssumeRole calls moto answered so far."""
    return len(store.assume_role_log.read_text().splitlines())


@pytest.fixture(scope="module")
def s3_iam(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IamStore]:
    """`iam_store` for the tests of one module."""
    with iam_store(tmp_path_factory.mktemp("moto-iam")) as store:
        yield store
