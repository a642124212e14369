"""A bare JVM (py4j, no Spark context) holding Iceberg 1.10's Java client, and small helpers to call it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway
from py4j.protocol import Py4JJavaError


def start_gateway(iceberg_jars: list[Path]) -> JavaGateway:
    """The Iceberg runtime jars first, then PySpark's jars (Hadoop for `HadoopFileIO`, SLF4J); dies with Python."""
    import pyspark  # noqa: PLC0415 - only where the Java suite runs

    spark_jars = Path(pyspark.__file__).parent / "jars"
    classpath = os.pathsep.join([*(str(jar) for jar in iceberg_jars), str(spark_jars / "*")])
    py4j_jar = next(spark_jars.glob("py4j-*.jar"))
    port = launch_gateway(
        classpath=classpath,
        jarpath=str(py4j_jar),
        die_on_exit=True,
        javaopts=["-Xmx512m", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error"],
    )
    return JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_convert=True))


class Java:
    """The JVM's classes by name, plus the conversions the tests need."""

    def __init__(self, gateway: JavaGateway) -> None:
        self.gateway = gateway
        self.jvm: Any = gateway.jvm
        self.iceberg: Any = self.jvm.org.apache.iceberg

    def strings(self, *items: str) -> Any:
        array = self.gateway.new_array(self.jvm.java.lang.String, len(items))
        for index, item in enumerate(items):
            array[index] = item
        return array

    def namespace(self, *levels: str) -> Any:
        return self.iceberg.catalog.Namespace.of(self.strings(*levels))

    def ident(self, namespace: Any, name: str) -> Any:
        return self.iceberg.catalog.TableIdentifier.of(namespace, name)

    def schema(self, fields: list[dict[str, Any]], schema_id: int = 0) -> Any:
        document = {"type": "struct", "schema-id": schema_id, "fields": fields}
        return self.iceberg.SchemaParser.fromJson(json.dumps(document))

    def types(self) -> Any:
        return self.iceberg.types.Types

    def sorted_names(self, listing: Any) -> list[str]:
        return sorted(str(identifier.name()) for identifier in listing)


class JavaError(Exception):
    """What a Java call threw: the exception's simple class name and message."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name, self.message = type_name, message


def java_error(call: Callable[[], Any]) -> JavaError:
    """The Java exception `call` throws (fails the test when it throws none)."""
    try:
        call()
    except Py4JJavaError as exc:
        thrown = exc.java_exception
        return JavaError(str(thrown.getClass().getSimpleName()), str(thrown.getMessage()))
    raise AssertionError("expected a Java exception, none was thrown")
