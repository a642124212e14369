"""Private pyiceberg names are imported in one module, `catalog_es.metadata.pyiceberg_compat`, whose test pins the
pyiceberg release they were checked against (a pyiceberg upgrade then fails in one place, not in scattered ones)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("api", "catalog_es", "commands", "projections")
COMPAT = ROOT / "catalog_es" / "metadata" / "pyiceberg_compat.py"


def private_pyiceberg_imports(source: str) -> list[str]:
    """`module.name` of every private pyiceberg name (a leading underscore) that `source` imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pyiceberg":
            found += [f"{node.module}.{alias.name}" for alias in node.names if alias.name.startswith("_")]
    return found


def test_only_the_compat_module_imports_private_pyiceberg_names() -> None:
    offenders = {
        str(path.relative_to(ROOT)): names
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != COMPAT and (names := private_pyiceberg_imports(path.read_text()))
    }
    assert offenders == {}


def test_the_finder_sees_a_private_name_and_ignores_public_ones() -> None:
    source = "from pyiceberg.expressions.visitors import _StrictMetricsEvaluator, residual_evaluator_of\n"
    assert private_pyiceberg_imports(source) == ["pyiceberg.expressions.visitors._StrictMetricsEvaluator"]
    assert private_pyiceberg_imports("from pyiceberg.table import FileScanTask\n") == []
    assert private_pyiceberg_imports(COMPAT.read_text())  # the compat module does import them
