"""Real object-store emulators for the tests: Azurite (Azure Blob, npm) and gcp-storage-emulator (GCS JSON API,
PyPI), each a subprocess on a free loopback port, with admin helpers that make and list containers/buckets."""

from __future__ import annotations

import base64
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from azure.storage.blob import BlobServiceClient
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

AZURITE_DIR = Path(__file__).resolve().parents[1] / "azurite"
AZURE_ACCOUNT = "catalogestest"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(name: str, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{name} did not listen on {port}: {log.read_text()}")


def _stop(process: subprocess.Popen[bytes], *, graceful: bool = True) -> None:
    if not graceful:  # its data lives in a temporary directory: nothing to flush
        process.kill()
        process.wait()
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _ensure_azurite() -> Path:
    """`npm ci` from the committed lock file, once (node_modules is not in git)."""
    binary = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is needed to install Azurite (tests/azurite)")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=AZURITE_DIR, check=True, capture_output=True)
    return binary


@dataclass(frozen=True)
class Azurite:
    """One Azurite blob service with one account whose key is made for this run."""

    endpoint: str  # the account's blob endpoint, path style: http://127.0.0.1:<port>/<account>
    account: str
    key: str

    def service(self) -> BlobServiceClient:
        return BlobServiceClient(self.endpoint, credential={"account_name": self.account, "account_key": self.key})

    def make_filesystem(self) -> str:
        name = f"fs-{uuid.uuid4().hex[:16]}"
        self.service().create_container(name)
        return name

    def blobs(self, filesystem: str, prefix: str = "") -> list[str]:
        client = self.service().get_container_client(filesystem)
        return sorted(blob.name for blob in client.list_blobs(name_starts_with=prefix or None))


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    binary = _ensure_azurite()
    port, workdir = free_port(), tmp_path_factory.mktemp("azurite")
    key = base64.b64encode(secrets.token_bytes(64)).decode()
    log = workdir / "azurite.log"
    environment = {**os.environ, "AZURITE_ACCOUNTS": f"{AZURE_ACCOUNT}:{key}"}
    arguments = ["--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(workdir), "--silent"]
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(binary), *arguments, "--skipApiVersionCheck", "--disableProductStyleUrl"],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    try:
        _wait_for_port("azurite", port, process, log)
        yield Azurite(endpoint=f"http://127.0.0.1:{port}/{AZURE_ACCOUNT}", account=AZURE_ACCOUNT, key=key)
    finally:
        _stop(process, graceful=False)


@dataclass(frozen=True)
class GcsEmulator:
    """One gcp-storage-emulator (in memory); it does not check tokens, so scoping is checked offline."""

    endpoint: str

    def make_bucket(self) -> str:
        name = f"bucket-{uuid.uuid4().hex[:16]}"
        answer = httpx.post(f"{self.endpoint}/storage/v1/b", params={"project": "test"}, json={"name": name})
        answer.raise_for_status()
        return name

    def objects(self, bucket: str, prefix: str = "") -> list[str]:
        answer = httpx.get(f"{self.endpoint}/storage/v1/b/{bucket}/o", params={"prefix": prefix})
        answer.raise_for_status()
        return sorted(item["name"] for item in answer.json().get("items", []))


@pytest.fixture(scope="session")
def gcs_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsEmulator]:
    port, workdir = free_port(), tmp_path_factory.mktemp("gcs")
    log = workdir / "gcs.log"
    command = [sys.executable, "-m", "gcp_storage_emulator", "start", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as output:
        process = subprocess.Popen([*command, "--in-memory"], stdout=output, stderr=subprocess.STDOUT)
    try:
        _wait_for_port("gcp-storage-emulator", port, process, log)
        yield GcsEmulator(endpoint=f"http://127.0.0.1:{port}")
    finally:
        _stop(process)


def service_account_key(email: str = "catalog@test-project.iam.gserviceaccount.com") -> dict[str, Any]:
    """A service-account key file as Google issues it, with a key pair made here (it signs JWTs only locally)."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        "type": "service_account",
        "project_id": "test-project",
        "private_key_id": uuid.uuid4().hex,
        "private_key": pem.decode(),
        "client_email": email,
        "client_id": "1",
        "token_uri": "http://127.0.0.1:9/token",  # never called: the catalog signs its own JWT access tokens
    }
