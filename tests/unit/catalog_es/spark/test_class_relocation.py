"""Class relocation on real jars (Jackson as shipped with pyspark): names, services, versions, reproducibility."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from catalog_es.spark.relocation import SHADED_ROOT, ClassFormatError, Relocator, class_references, relocate_jars

JACKSON = Relocator(("com/fasterxml/jackson/",))
SHADED = SHADED_ROOT + "com/fasterxml/jackson/"


def pyspark_jar(prefix: str) -> Path:
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None
    assert spec.origin is not None
    (jar,) = (Path(spec.origin).parent / "jars").glob(f"{prefix}-2.*.jar")
    return jar


@pytest.fixture(scope="module")
def relocated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("relocated") / "shaded-jackson.jar"
    relocate_jars([pyspark_jar("jackson-core"), pyspark_jar("jackson-databind")], output, JACKSON)
    return output


def test_service_files_of_several_jars_are_merged(tmp_path: Path) -> None:
    jars = []
    for number, provider in enumerate(("com.fasterxml.jackson.A", "com.fasterxml.jackson.B")):
        jar = tmp_path / f"{number}.jar"
        with zipfile.ZipFile(jar, "w") as archive:
            archive.writestr("META-INF/services/com.fasterxml.jackson.Spi", f"{provider}\n")
        jars.append(jar)

    relocate_jars(jars, tmp_path / "out.jar", JACKSON)

    with zipfile.ZipFile(tmp_path / "out.jar") as jar:
        merged = jar.read("META-INF/services/org.apache.iceberg.shaded.com.fasterxml.jackson.Spi").split()
    assert merged == [
        b"org.apache.iceberg.shaded.com.fasterxml.jackson.A",
        b"org.apache.iceberg.shaded.com.fasterxml.jackson.B",
    ]


def test_relocate_bytes_moves_slash_and_dot_names_once_and_leaves_lookalikes() -> None:
    text = b"Lcom/fasterxml/jackson/core/JsonFactory; com.fasterxml.jackson.databind com/fasterxml/jacksonish/X"

    once = JACKSON.relocate_bytes(text)

    assert once == (
        b"Lorg/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactory; "
        b"org.apache.iceberg.shaded.com.fasterxml.jackson.databind com/fasterxml/jacksonish/X"
    )
    assert JACKSON.relocate_bytes(once) == once, "never relocated twice"


def test_relocate_class_rewrites_every_jackson_reference_and_keeps_the_others() -> None:
    with zipfile.ZipFile(pyspark_jar("jackson-databind")) as jar:
        original = jar.read("com/fasterxml/jackson/databind/ObjectMapper.class")

    relocated = JACKSON.relocate_class(original)
    before, after = class_references(original), class_references(relocated)

    assert len(before) == len(after)
    assert any(name.startswith("com/fasterxml/jackson/") for name in before)
    assert not any(name.startswith("com/fasterxml/jackson/") for name in after)
    for old, new in zip(before, after, strict=True):
        assert new == (SHADED_ROOT + old if old.startswith("com/fasterxml/jackson/") else old)
    assert JACKSON.relocate_class(relocated) == relocated


def test_relocate_class_refuses_what_is_not_a_class_file() -> None:
    with pytest.raises(ClassFormatError):
        JACKSON.relocate_class(b"PK\x03\x04 not a class")
    with pytest.raises(ClassFormatError):
        JACKSON.relocate_class(b"\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x05\x01\x00")  # pool cut short


def test_relocated_jar_has_shaded_classes_services_and_versions_but_no_module_info(relocated: Path) -> None:
    with zipfile.ZipFile(relocated) as jar:
        names = jar.namelist()
        services = {
            name.removeprefix("META-INF/services/"): jar.read(name).decode().split()
            for name in names
            if name.startswith("META-INF/services/")
        }
        manifest = jar.read("META-INF/MANIFEST.MF").decode()

    classes = [name for name in names if name.endswith(".class")]
    assert f"{SHADED}databind/ObjectMapper.class" in names
    assert all(name.startswith((SHADED, "META-INF/versions/")) for name in classes)
    assert any(name.startswith(f"META-INF/versions/11/{SHADED}") for name in names)
    assert not any(name.endswith("module-info.class") or name.startswith("META-INF/maven/") for name in names)
    assert services == {
        "org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory": [
            "org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory"
        ],
        "org.apache.iceberg.shaded.com.fasterxml.jackson.core.ObjectCodec": [
            "org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper"
        ],
    }
    assert "Multi-Release" not in manifest
    assert "META-INF/LICENSE" in names


def test_relocated_jar_is_byte_for_byte_reproducible(relocated: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.jar"
    relocate_jars([pyspark_jar("jackson-core"), pyspark_jar("jackson-databind")], again, JACKSON)

    assert again.read_bytes() == relocated.read_bytes()


@pytest.mark.skipif(shutil.which("javap") is None, reason="needs a JDK's javap")
def test_the_jvm_parses_a_relocated_class(relocated: Path) -> None:
    shown = subprocess.run(
        ["javap", "-cp", str(relocated), "org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    assert "public class org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper" in shown
    assert "org.apache.iceberg.shaded.com.fasterxml.jackson.core.JsonFactory" in shown
