"""The `catalog-es` command tree loads without the web stack, the database driver or pyiceberg (a fast `--help`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("litestar", "uvicorn", "pyiceberg", "pyarrow", "psycopg", "boto3", "nats", "rich")

_PROBE = """
import json, sys
from typer.main import get_command
import api.cli
get_command(api.cli.cli).main(["--help"], standalone_mode=False)
sys.stderr.write(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in HEAVY)))
"""


def test_building_the_cli_and_its_help_imports_no_heavy_dependency() -> None:
    root = str(Path(__file__).resolve().parents[4])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    probe = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{_PROBE}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
        cwd=root,
    )

    assert "serve" in probe.stdout
    assert "audit" in probe.stdout
    assert json.loads(probe.stderr) == []
