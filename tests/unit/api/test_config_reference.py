"""deploy/CONFIGURATION.md is generated from the settings and storage-profile classes and kept current: every
CATALOG_ES__* variable and profile field with its default and meaning (issue 31)."""

from __future__ import annotations

from pathlib import Path

import msgspec
from typer.testing import CliRunner

from api.cli import cli
from api.config_reference import PROFILES, profile_entries, render, setting_entries
from api.settings import ENV_PREFIX, Settings

REFERENCE = Path(__file__).resolve().parents[3] / "deploy" / "CONFIGURATION.md"


def _leaves(struct: msgspec.Struct, prefix: str = ENV_PREFIX) -> set[str]:
    """Every variable the settings read, walked from a Settings instance (the loader's own naming rule)."""
    found = set()
    for field in msgspec.structs.fields(type(struct)):
        value = getattr(struct, field.name)
        name = f"{prefix}{field.name.upper()}"
        found |= _leaves(value, f"{name}__") if isinstance(value, msgspec.Struct) else {name}
    return found


def test_the_checked_in_reference_is_what_the_settings_classes_generate() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == render(), (
        "deploy/CONFIGURATION.md is stale: run `catalog-es config reference --output deploy/CONFIGURATION.md`"
    )


def test_every_setting_and_profile_field_is_in_the_reference_with_a_meaning() -> None:
    entries = list(setting_entries())
    fields = [(profile, entry) for profile in PROFILES for entry in profile_entries(profile)]

    assert {entry.name for entry in entries} == _leaves(Settings())
    assert [entry.name for entry in entries if not entry.meaning] == []
    assert [f"{profile.__name__}.{entry.name}" for profile, entry in fields if not entry.meaning] == []
    text = render()
    for name in ("CATALOG_ES__UI__CLIENT_ID", "CATALOG_ES__TASK_WORKER__ENABLED", "CATALOG_ES__NATS__URL"):
        assert f"| `{name}` |" in text
    for sts in ("sts-enabled", "sts-role-arn", "sts-endpoint", "sts-token-validity-seconds", "sts-session-tags"):
        assert f"| `{sts}` |" in text


def test_the_reference_command_writes_the_file_and_its_check_fails_on_a_stale_one(tmp_path: Path) -> None:
    target = tmp_path / "configuration.md"
    runner = CliRunner()

    written = runner.invoke(cli, ["config", "reference", "--output", str(target)])
    fresh = runner.invoke(cli, ["config", "reference", "--output", str(target), "--check"])
    target.write_text(target.read_text() + "| `CATALOG_ES__GONE` | `str` | unset | renamed |\n")
    stale = runner.invoke(cli, ["config", "reference", "--output", str(target), "--check"])

    assert written.exit_code == 0, written.output
    assert fresh.exit_code == 0, fresh.output
    assert stale.exit_code == 1
    assert "is stale" in stale.stderr
