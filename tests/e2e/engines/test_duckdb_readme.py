"""The README's DuckDB snippet (extensions loaded offline from the PyPI wheels) works as written (issue 31)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import RunningCatalog
from tests.e2e.engines.conftest import Seeded

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_duckdb_snippet_attaches_the_warehouse_and_lists_its_tables(
    catalog: RunningCatalog, seeded: Seeded
) -> None:
    for name in ("duckdb", "duckdb_extension_httpfs", "duckdb_extension_avro", "duckdb_extension_iceberg"):
        pytest.importorskip(name)
    block = re.search(r"<!-- duckdb-offline -->\n```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert block is not None, "README.md lost its DuckDB snippet"
    code, replaced = re.subn(r"http://127\.0\.0\.1:\d+/catalog", catalog.catalog_uri, block.group(1))
    assert replaced == 1, "the snippet names no catalog endpoint to point at this test's server"
    printed = io.StringIO()

    with contextlib.redirect_stdout(printed):
        exec(code, {"__name__": "readme"})

    assert "('engines', 'sales')" in printed.getvalue()
