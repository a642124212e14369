"""Reading jars out of .deb files without dpkg, and which newer Debian version may stand in for a pinned one."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from catalog_es.spark.artifacts import SparkJarsError
from catalog_es.spark.debian import _newer_same_major, deb_member


def _ar_member(name: str, body: bytes) -> bytes:
    header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode()
    return header + body + (b"\n" if len(body) % 2 else b"")


@pytest.fixture
def deb(tmp_path: Path) -> Path:
    """A package whose data archive holds a versioned jar and an unversioned link to it, as Debian's Java ones do."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as archive:
        jar = tarfile.TarInfo("./usr/share/java/lib-5.6.4.jar")
        jar.size = 3
        archive.addfile(jar, io.BytesIO(b"jar"))
        link = tarfile.TarInfo("./usr/share/java/lib.jar")
        link.type = tarfile.SYMTYPE
        link.linkname = "lib-5.6.4.jar"
        archive.addfile(link)
    path = tmp_path / "lib.deb"
    path.write_bytes(b"!<arch>\n" + _ar_member("debian-binary", b"2.0\n") + _ar_member("data.tar.xz", data.getvalue()))
    return path


def test_deb_member_reads_a_file_and_follows_the_unversioned_link(deb: Path) -> None:
    assert deb_member(deb, "usr/share/java/lib-5.6.4.jar") == b"jar"
    assert deb_member(deb, "/usr/share/java/lib.jar") == b"jar"


def test_deb_member_refuses_a_missing_member_or_a_file_that_is_no_package(deb: Path, tmp_path: Path) -> None:
    not_a_deb = tmp_path / "x.deb"
    not_a_deb.write_bytes(b"PK\x03\x04")

    with pytest.raises(SparkJarsError, match=r"missing\.jar"):
        deb_member(deb, "usr/share/java/missing.jar")
    with pytest.raises(SparkJarsError, match="not a Debian package"):
        deb_member(not_a_deb, "usr/share/java/lib.jar")


@pytest.mark.skipif(shutil.which("dpkg") is None, reason="compares versions with dpkg")
@pytest.mark.parametrize(
    ("candidate", "accepted"),
    [("5.6.4-1", True), ("5.6.5-1", True), ("5.10.0-2", True), ("5.6.3-1", False), ("6.0.0-1", False)],
)
def test_only_a_newer_version_of_the_same_major_stands_in_for_a_pinned_one(candidate: str, accepted: bool) -> None:
    assert _newer_same_major(candidate, "5.6.4-1") is accepted
