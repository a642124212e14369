"""The example pipeline (deploy/examples/spark_pipeline.py) end to end on the suite's session, with fewer rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

PIPELINE = Path(__file__).parents[3] / "deploy" / "examples" / "spark_pipeline.py"
ROWS = 12_000


def load_pipeline() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spark_pipeline", PIPELINE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_pipeline_loads_merges_evolves_branches_travels_and_maintains(spark: SparkSession) -> None:
    results = load_pipeline().run(spark, namespace="pipeline", rows=ROWS)

    cancelled_before_merge = (ROWS - 1000) // 10  # every tenth order, except the 1,000 the MERGE ships
    remaining = ROWS + 500 - cancelled_before_merge
    assert results["load rows"] == ROWS
    assert results["merge into"] == 1500, "1,000 orders shipped and 500 inserted"
    assert results["delete cancelled"] == remaining
    assert results["evolve schema"] == ["order_id", "customer_id", "region", "ordered_at", "total", "status", "channel"]
    assert results["write to branch (audit, main)"] == (remaining + 1, remaining)
    assert results["version as of load"] == ROWS
    assert results["timestamp as of load"] == ROWS
    assert results["tag after_load count"] == ROWS
    assert results["rewrite_data_files"]["rewritten_data_files_count"] > 0
    assert results["data files after rewrite"] < results["data files before rewrite"]
    assert results["expire_snapshots"]["deleted_manifest_lists_count"] > 0
    assert results["refs"] == [("after_load", "TAG"), ("audit", "BRANCH"), ("main", "BRANCH")]
    assert results["final rows"] == remaining
