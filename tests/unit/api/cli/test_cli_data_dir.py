"""The operator CLI cannot mislead: a wrong data dir or port is a clear error and a non-zero exit, not a new catalog."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import cli


@pytest.fixture(autouse=True)
def _embedded_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CATALOG_ES__PG_DSN", "CATALOG_ES__DATA_DIR", "CATALOG_ES__PORT"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "history"],
        ["audit", "as-of", "2026-01-01T00:00:00Z"],
        ["audit", "export"],
        ["audit", "verify"],
        ["events", "tail"],
        ["projector", "status"],
        ["projections", "rebuild", "--all"],
        ["relay", "--status"],
    ],
)
def test_a_command_on_a_mistyped_data_dir_fails_and_creates_nothing(tmp_path: Path, command: list[str]) -> None:
    mistyped = tmp_path / "catalgo-es"

    result = CliRunner().invoke(cli, [*command, "--data-dir", str(mistyped)])

    assert result.exit_code == 1, result.output
    assert f"no catalog in {mistyped}" in result.output
    assert "Traceback" not in result.output
    assert not mistyped.exists()


@pytest.mark.parametrize("command", [["serve"], ["migrate"], ["audit", "history"]])
def test_a_file_given_as_the_data_dir_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    not_a_dir = tmp_path / "notes.txt"
    not_a_dir.write_text("hello")

    result = CliRunner().invoke(cli, [*command, "--data-dir", str(not_a_dir)])

    assert result.exit_code == 2, result.output
    assert "is a file, not a directory" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_serve_on_an_impossible_port_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["serve", "--data-dir", str(tmp_path / "data"), "--port", "99999"])

    assert result.exit_code == 2, result.output
    assert "Invalid value for '--port'" in result.output
    assert "65535" in result.output
    assert not (tmp_path / "data").exists()


def test_serve_on_an_impossible_port_from_the_environment_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATALOG_ES__PORT", "99999")

    result = CliRunner().invoke(cli, ["serve", "--data-dir", str(tmp_path / "data")])

    assert result.exit_code == 2, result.output
    assert "port 99999 is not in 1..65535" in result.output
