"""moto's S3 server with IAM enforcement on: unsigned requests and wrong signatures are refused.

The first three actions (an IAM user, its policy, its access key) run before enforcement starts
(`INITIAL_NO_AUTH_ACTION_COUNT`); from then on only that user's correctly signed requests get through.
The plain fixture in s3_server.py (any key pair accepted) stays as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from msgspec import Struct

from tests.integration.s3_server import REGION, _free_port, _wait_for_port

_SETUP_ACTIONS = 3
_BOOTSTRAP_KEYS = {"aws_access_key_id": "bootstrap", "aws_secret_access_key": "bootstrap"}


class IamS3(Struct, frozen=True):
    """The endpoint and the one IAM user's key pair allowed to use it."""

    endpoint: str
    access_key_id: str
    secret_access_key: str

    def client(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            config=Config(s3={"addressing_style": "path"}),
        )


@pytest.fixture(scope="session")
def iam_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IamS3]:
    port = _free_port()
    log = tmp_path_factory.mktemp("moto-iam") / "moto.log"
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_SETUP_ACTIONS)}
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        _wait_for_port(port, process, log)
        endpoint = f"http://127.0.0.1:{port}"
        iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION, **_BOOTSTRAP_KEYS)
        iam.create_user(UserName="warehouse")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        iam.put_user_policy(UserName="warehouse", PolicyName="all-s3", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="warehouse")["AccessKey"]
        yield IamS3(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
