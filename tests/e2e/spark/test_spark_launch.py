"""`catalog-es spark submit` runs PySpark's spark-submit without an activated virtualenv (issue 31): PySpark's own
script, run from a shell whose `python3` has no PySpark, died with an AttributeError in find_spark_home.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

APP = """
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
print("RESULT", spark.range(3).count(), spark.conf.get("spark.sql.catalog.catalog_es.io-impl"))
spark.stop()
"""


def test_spark_submit_runs_an_application_with_the_catalog_conf_from_a_shell_without_the_venv(
    spark_jars_dir: Path, tmp_path: Path
) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    bare = {key: os.environ[key] for key in ("HOME", "JAVA_HOME") if key in os.environ}
    environment = {**bare, "PATH": "/usr/bin:/bin", "AWS_EC2_METADATA_DISABLED": "true", "TMPDIR": str(tmp_path)}
    command = [str(Path(sys.executable).parent / "catalog-es"), "spark", "submit", "--storage", "file"]

    result = subprocess.run(
        [*command, "--dest", str(spark_jars_dir), "--master", "local[1]", str(app)],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert result.returncode == 0, result.stderr[-3000:]
    assert "RESULT 3 org.apache.iceberg.hadoop.HadoopFileIO" in result.stdout
