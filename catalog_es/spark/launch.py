"""Run PySpark's launch scripts (`spark-submit`, `pyspark`) with the interpreter catalog-es runs on.

The scripts pip installs beside PySpark find Spark's home by running `python3` from the PATH: without an activated
virtualenv that is another interpreter, without PySpark, and they die with `AttributeError: 'NoneType' object has
no attribute 'origin'`. Setting `SPARK_HOME` and the Python of the driver and workers to this interpreter makes
them work from any shell.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from importlib.util import find_spec
from pathlib import Path


class SparkLaunchError(Exception):
    """PySpark (or the script asked for) is not installed for this interpreter."""


def pyspark_home() -> Path:
    """The directory of the installed `pyspark` package, which is a complete Spark home (bin/, jars/)."""
    spec = find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SparkLaunchError(f"PySpark is not installed for {sys.executable}: pip install 'catalog-es[spark]'")
    return Path(spec.origin).parent


def launch_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with SPARK_HOME, PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON on this interpreter (kept if set)."""
    interpreter = sys.executable
    return {
        **environ,
        "SPARK_HOME": environ.get("SPARK_HOME") or str(pyspark_home()),
        "PYSPARK_PYTHON": environ.get("PYSPARK_PYTHON") or interpreter,
        "PYSPARK_DRIVER_PYTHON": environ.get("PYSPARK_DRIVER_PYTHON") or interpreter,
        "PATH": os.pathsep.join([str(Path(interpreter).parent), environ.get("PATH", "")]),
    }


def launch_command(script: str, arguments: Sequence[str], environment: Mapping[str, str]) -> list[str]:
    """`<SPARK_HOME>/bin/<script> <arguments>`.

    Raises:
        SparkLaunchError: the script is not in that Spark home.
    """
    path = Path(environment["SPARK_HOME"]) / "bin" / script
    if not path.is_file():
        raise SparkLaunchError(f"{path} does not exist: SPARK_HOME={environment['SPARK_HOME']} is no Spark home")
    return [str(path), *arguments]
