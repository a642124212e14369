"""Assemble, once, the offline Spark classpath: the Iceberg runtime plus the shaded jars its stripped build lacks."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import msgspec

from catalog_es.spark.artifacts import (
    HTTPCLIENT5_DEB,
    HTTPCORE5_DEB,
    ICEBERG_WHEEL,
    JACKSON_WHEEL,
    SparkJarsError,
    fetch_wheel,
    sha256_of,
)
from catalog_es.spark.conf import ICEBERG_VERSION  # one version for the jars and the conf
from catalog_es.spark.debian import deb_member, fetch_debs
from catalog_es.spark.relocation import Relocator, relocate_jars

RUNTIME_JAR = f"iceberg-spark-runtime-3.5_2.12-{ICEBERG_VERSION}.jar"
RUNTIME_SHA256 = "5b30080c7bbbced0fb0900894b7ea0200b1bbb2e4c355ebe727baafaf49c16f6"
JACKSON_JAR = "iceberg-shaded-jackson-2.18.8.jar"
HTTPCLIENT5_JAR = "iceberg-shaded-httpclient5.jar"  # 5.6.4 with core 5.4.4, or sid's newer 5.x once those left it
JARS = (RUNTIME_JAR, JACKSON_JAR, HTTPCLIENT5_JAR)
# What an online deployment puts in `spark.jars.packages` instead.
MAVEN_PACKAGES = f"org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:{ICEBERG_VERSION}"

JACKSON_PREFIXES = ("com/fasterxml/jackson/",)
HTTPCLIENT5_PREFIXES = ("org/apache/hc/client5/", "org/apache/hc/core5/")  # core5/ covers httpcore5-h2
_JACKSON_MEMBERS = tuple(
    f"snowpark_connect_deps_2/jars/jackson-{name}-2.18.8.jar" for name in ("core", "databind", "annotations")
)
_RUNTIME_MEMBER = f"snowpark_connect_deps_iceberg/jars/{RUNTIME_JAR}"
# The packages' unversioned links, so a newer 5.x (once sid has moved on) is read the same way.
_HTTPCLIENT5 = "usr/share/java/httpclient5.jar"
_HTTPCORE5 = "usr/share/java/httpcore5.jar"
_HTTPCORE5_H2 = "usr/share/java/httpcore5-h2.jar"  # httpclient5 needs it; -reactive, -cache, -fluent it does not
_STAMP = "catalog-es-jars.json"
JARS_DIR_VARIABLE = "CATALOG_ES_SPARK_JARS_DIR"
RECIPE = 2  # bump when the inputs or the relocation change, so cached assemblies are rebuilt
DOWNLOADS = "downloads"  # inputs fetched, or placed here by hand on a machine without network; removed when done


class JarsStamp(msgspec.Struct, frozen=True):
    """What a cache directory holds, written last: its presence means the assembly finished."""

    jars: dict[str, str]  # file name -> sha256
    recipe: int = 0


def default_jars_dir() -> Path:
    """`$CATALOG_ES_SPARK_JARS_DIR`, else `$XDG_CACHE_HOME/catalog-es/spark-jars` (`~/.cache/...` without it)."""
    if configured := os.environ.get(JARS_DIR_VARIABLE):
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "catalog-es" / "spark-jars"


def cached_jars(directory: Path) -> list[Path] | None:
    """The assembled jars in `directory` if a finished assembly is there, else None."""
    stamp_path = directory / _STAMP
    if not stamp_path.is_file():
        return None
    try:
        stamp = msgspec.json.decode(stamp_path.read_bytes(), type=JarsStamp)
    except msgspec.DecodeError:
        return None
    paths = [directory / name for name in JARS]
    if stamp.recipe != RECIPE or sorted(stamp.jars) != sorted(JARS) or not all(path.is_file() for path in paths):
        return None
    return paths


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """One assembly at a time per directory (several test processes may ask at once)."""
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _extract(wheel: Path, member: str, target: Path) -> Path:
    with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, target.open("wb") as sink:
        shutil.copyfileobj(source, sink, 1 << 20)
    return target


def _assemble(downloads: Path, work: Path, output: Path) -> None:
    """Fetch the four pinned inputs into `downloads` and write the three jars into `output`."""
    runtime = _extract(fetch_wheel(ICEBERG_WHEEL, downloads), _RUNTIME_MEMBER, output / RUNTIME_JAR)
    if sha256_of(runtime) != RUNTIME_SHA256:
        raise SparkJarsError(f"{RUNTIME_JAR} in {ICEBERG_WHEEL.filename} does not have the pinned sha256")
    jackson_wheel = fetch_wheel(JACKSON_WHEEL, downloads)
    jackson = [_extract(jackson_wheel, member, work / Path(member).name) for member in _JACKSON_MEMBERS]
    relocate_jars(jackson, output / JACKSON_JAR, Relocator(JACKSON_PREFIXES))
    client_deb, core_deb = fetch_debs([HTTPCLIENT5_DEB, HTTPCORE5_DEB], downloads)
    http_jars = []
    for deb, member in ((client_deb, _HTTPCLIENT5), (core_deb, _HTTPCORE5), (core_deb, _HTTPCORE5_H2)):
        path = work / Path(member).name
        path.write_bytes(deb_member(deb, member))
        http_jars.append(path)
    relocate_jars(http_jars, output / HTTPCLIENT5_JAR, Relocator(HTTPCLIENT5_PREFIXES))


def spark_jars(directory: Path | None = None) -> list[Path]:
    """The jars for `spark.jars`, assembled into `directory` (default `default_jars_dir()`) on first use.

    Downloads about 130 MB once (two wheels from PyPI with pip, two debs from Debian sid with apt-get) into
    `<directory>/downloads`, removed after; later calls only read the stamp.

    Raises:
        SparkJarsError: a download failed or an input does not have its pinned sha256.
    """
    directory = (directory or default_jars_dir()).expanduser().resolve()
    if cached := cached_jars(directory):
        return cached
    directory.mkdir(parents=True, exist_ok=True)
    with _locked(directory):
        if cached := cached_jars(directory):
            return cached
        downloads = directory / DOWNLOADS
        downloads.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".assembly-", dir=directory) as scratch:
            work = Path(scratch)
            output = work / "out"
            output.mkdir()
            _assemble(downloads, work, output)
            (directory / _STAMP).unlink(missing_ok=True)
            for name in JARS:
                (output / name).replace(directory / name)
        shutil.rmtree(downloads)
        stamp = JarsStamp(jars={name: sha256_of(directory / name) for name in JARS}, recipe=RECIPE)
        (directory / _STAMP).write_bytes(msgspec.json.encode(stamp))
    return [directory / name for name in JARS]
