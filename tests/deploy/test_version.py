"""`catalog-es --version`: the installed distribution's version, for images and bug reports."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from api.cli import cli


def test_version_prints_the_installed_distribution_version_and_exits_zero() -> None:
    result = CliRunner().invoke(cli, ["--version"])

    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"catalog-es {version('catalog-es')}"
