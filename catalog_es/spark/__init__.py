"""Spark with catalog-es: the offline Iceberg classpath, the catalog conf and a SparkSession helper."""

from __future__ import annotations

from catalog_es.spark.conf import catalog_conf
from catalog_es.spark.jars import MAVEN_PACKAGES, spark_jars
from catalog_es.spark.session import session

__all__ = ["MAVEN_PACKAGES", "catalog_conf", "session", "spark_jars"]
