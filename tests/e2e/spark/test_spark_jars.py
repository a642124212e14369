"""The assembled offline classpath: every shaded class the Iceberg runtime names exists; the CLI prints the jars."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from catalog_es.spark.jars import HTTPCLIENT5_JAR, JACKSON_JAR, JARS, RUNTIME_JAR
from catalog_es.spark.relocation import class_references

pytestmark = pytest.mark.spark

SHADED_PREFIXES = ("org/apache/iceberg/shaded/com/fasterxml/", "org/apache/iceberg/shaded/org/apache/hc/")
# Only the shaded Arrow ObjectMapperFactory names it, which neither the SQL nor the REST path reaches.
KNOWN_UNRESOLVED = {"org/apache/iceberg/shaded/com/fasterxml/jackson/datatype/jsr310/JavaTimeModule"}


def classes(jar: Path) -> set[str]:
    with zipfile.ZipFile(jar) as archive:
        return {name.removesuffix(".class") for name in archive.namelist() if name.endswith(".class")}


def test_every_shaded_jackson_and_httpclient_class_the_runtime_names_is_provided(spark_jars_dir: Path) -> None:
    provided = classes(spark_jars_dir / JACKSON_JAR) | classes(spark_jars_dir / HTTPCLIENT5_JAR)
    unresolved = set()
    with zipfile.ZipFile(spark_jars_dir / RUNTIME_JAR) as runtime:
        for name in runtime.namelist():
            if name.endswith(".class") and not name.startswith("META-INF/"):
                references = class_references(runtime.read(name))
                unresolved |= {ref for ref in references if ref.startswith(SHADED_PREFIXES) and ref not in provided}

    assert unresolved == KNOWN_UNRESOLVED
    assert len(classes(spark_jars_dir / JACKSON_JAR)) > 1000
    assert any(name.endswith("client5/http/ssl/TlsSocketStrategy") for name in provided), "httpclient5 >= 5.4"


def test_cli_prints_the_cached_jars_for_spark_jars(spark_jars_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "api", "spark", "jars", "--dest", str(spark_jars_dir)],
        capture_output=True,
        text=True,
        check=True,
    )

    assert result.stdout.strip().split(",") == [str(spark_jars_dir.resolve() / name) for name in JARS]
