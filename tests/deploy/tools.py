"""Helpers of the deployment tests: where the artefacts are, the linters the dev extras install, settings checks."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from api.settings import ENV_PREFIX, Settings, load_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def tool(name: str) -> str:
    """A command-line tool from the dev extras (beside this interpreter, else on PATH), or skip the test."""
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def catalog_settings(environment: Mapping[str, str]) -> Settings:
    """The Settings a catalog-es process would load from this environment.

    msgspec refuses unknown names (every struct forbids unknown fields) and malformed values, so a misspelt
    or renamed CATALOG_ES__* variable in a deployment file fails here instead of at the operator's start.
    """
    settings_only = {name: value for name, value in environment.items() if name.startswith(ENV_PREFIX)}
    return load_settings(settings_only)
