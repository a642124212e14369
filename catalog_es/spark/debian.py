"""Debian packages without installing them: `apt-get download` through a private source list, and reading a .deb."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from catalog_es.spark.artifacts import Deb, SparkJarsError, present, run, verified

DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_SUITE = "sid"  # bookworm's httpclient5 5.2 lacks TlsSocketStrategy (needs >= 5.4)
DEBIAN_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


class PrivateApt:
    """apt-get and apt-cache on a one-line sid source list, with their own lists and cache directories."""

    def __init__(self, apt_get: str, root: Path) -> None:
        mirror = os.environ.get("CATALOG_ES_DEBIAN_MIRROR", DEBIAN_MIRROR)
        keyring = os.environ.get("CATALOG_ES_DEBIAN_KEYRING", DEBIAN_KEYRING)
        (root / "lists" / "partial").mkdir(parents=True)
        (root / "cache" / "archives" / "partial").mkdir(parents=True)
        (root / "sid.list").write_text(f"deb [signed-by={keyring}] {mirror} {DEBIAN_SUITE} main\n")
        self.apt_get = apt_get
        self.options = [
            "-q",
            "-o",
            f"Dir::Etc::sourcelist={root / 'sid.list'}",
            "-o",
            "Dir::Etc::sourceparts=-",  # the system's sources.list.d is ignored
            "-o",
            f"Dir::State::Lists={root / 'lists'}",
            "-o",
            f"Dir::Cache={root / 'cache'}",
        ]

    def get(self, *arguments: str, cwd: Path | None = None) -> None:
        run([self.apt_get, *self.options, *arguments], cwd=cwd)

    def candidate(self, package: str) -> str:
        """The version of `package` that the source offers now."""
        shown = subprocess.run(  # noqa: S603
            [self.apt_get.replace("apt-get", "apt-cache"), *self.options, "show", "--no-all-versions", package],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        versions = [line.split(":", 1)[1].strip() for line in shown.splitlines() if line.startswith("Version:")]
        if not versions:
            raise SparkJarsError(f"Debian {DEBIAN_SUITE} has no package {package}")
        return versions[0]


@contextmanager
def private_apt() -> Iterator[PrivateApt]:
    """A `PrivateApt` with a fresh index of sid (about 11 MB), removed afterwards."""
    apt_get = shutil.which("apt-get")
    if apt_get is None:
        raise SparkJarsError("apt-get not found")
    with tempfile.TemporaryDirectory(prefix="catalog-es-apt-") as scratch:
        apt = PrivateApt(apt_get, Path(scratch))
        apt.get("update")
        yield apt


def _newer_same_major(candidate: str, pinned: str) -> bool:
    if candidate.split(".", 1)[0] != pinned.split(".", 1)[0]:
        return False
    compared = subprocess.run(["dpkg", "--compare-versions", candidate, "ge", pinned], check=False)  # noqa: S603, S607
    return compared.returncode == 0


def fetch_debs(debs: list[Deb], directory: Path) -> list[Path]:
    """Download `debs` from Debian sid into `directory`, nothing installed, the system's apt setup untouched.

    The pinned versions are checked against their sha256. sid moves on: once a pinned version has left it, the
    current version of the same major is taken instead (apt verifies it against the signed index), with a warning.
    Files already in `directory` with the pinned hash are used as they are (for machines without network).
    `CATALOG_ES_DEBIAN_MIRROR` and `CATALOG_ES_DEBIAN_KEYRING` choose another mirror and keyring.

    Raises:
        SparkJarsError: apt-get is missing, a download failed, or a pinned file has another hash.
    """
    found = {deb.package: present(directory, deb.filename, deb.sha256) for deb in debs}
    missing = [deb for deb in debs if found[deb.package] is None]
    if missing and shutil.which("apt-get") is None:
        names = ", ".join(deb.filename for deb in missing)
        raise SparkJarsError(f"apt-get not found: place {names} (Debian {DEBIAN_SUITE}) in {directory}")
    if missing:
        with private_apt() as apt:
            for deb in missing:
                found[deb.package] = _download(apt, deb, directory)
    return [path for path in found.values() if path is not None]


def _download(apt: PrivateApt, deb: Deb, directory: Path) -> Path:
    try:
        apt.get("download", f"{deb.package}={deb.version}", cwd=directory)
        return verified(directory / deb.filename, deb.sha256)
    except SparkJarsError:
        version = apt.candidate(deb.package)
        if version == deb.version or not _newer_same_major(version, deb.version):
            raise
    apt.get("download", f"{deb.package}={version}", cwd=directory)
    warnings.warn(f"{deb.package} {deb.version} has left Debian {DEBIAN_SUITE}; took {version}", stacklevel=3)
    return directory / f"{deb.package}_{version}_all.deb"


def deb_member(deb: Path, member: str) -> bytes:
    """One file of a .deb's data archive (an `ar` archive holding `data.tar.{xz,gz,bz2}`), links followed."""
    data = deb.read_bytes()
    if not data.startswith(b"!<arch>\n"):
        raise SparkJarsError(f"{deb.name} is not a Debian package")
    position = 8
    while position + 60 <= len(data):
        header = data[position : position + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        body = data[position + 60 : position + 60 + size]
        if name.startswith("data.tar"):
            with tarfile.open(fileobj=io.BytesIO(body)) as archive:
                try:
                    extracted = archive.extractfile("./" + member.lstrip("/"))
                except KeyError:
                    extracted = None
                if extracted is None:
                    raise SparkJarsError(f"{member} is not a file in {deb.name}")
                return extracted.read()
        position += 60 + size + size % 2
    raise SparkJarsError(f"{deb.name} has no data archive")
