"""strict_real_path: the same answers as `os.path.realpath(strict=True)`, symlinks and missing files included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from catalog_es.storage.real_path import strict_real_path


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "real" / "metadata").mkdir(parents=True)
    (tmp_path / "real" / "metadata" / "v1.json").write_text("{}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.json").write_text("{}")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "metadata" / "escape.json").symlink_to(tmp_path / "outside" / "secret.json")
    (tmp_path / "real" / "metadata" / "dangling.json").symlink_to(tmp_path / "gone.json")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    return tmp_path


@pytest.mark.parametrize(
    "relative",
    ["real/metadata/v1.json", "alias/metadata/v1.json", "real/metadata/escape.json", "alias/metadata", "real"],
)
def test_an_existing_path_resolves_as_realpath_does(tmp_path: Path, relative: str) -> None:
    root = _tree(tmp_path)
    assert strict_real_path(str(root / relative)) == os.path.realpath(root / relative, strict=True)


@pytest.mark.parametrize("relative", ["real/metadata/v2.json", "real/metadata/dangling.json", "alias/none/v1.json"])
def test_a_missing_file_raises_file_not_found(tmp_path: Path, relative: str) -> None:
    with pytest.raises(FileNotFoundError):
        strict_real_path(str(_tree(tmp_path) / relative))


def test_a_path_through_a_file_raises_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        strict_real_path(str(_tree(tmp_path) / "real" / "metadata" / "v1.json" / "x"))


def test_a_symlink_loop_raises_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError, match=r"ymbolic links|loop"):
        strict_real_path(str(_tree(tmp_path) / "loop"))
