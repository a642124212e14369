"""Run maintenance procedures on one SparkSession: one Spark catalog per warehouse, one CALL per job."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog_es.spark.conf import ICEBERG_EXTENSIONS, catalog_conf
from catalog_es.spark.procedures import (
    DATA_COMPACTION,
    ORPHAN_FILE_REMOVAL,
    SNAPSHOT_EXPIRY,
    changes_of,
    orphan_cutoff_ms,
    procedure_call,
    quote_identifier,
)
from catalog_es.spark.session import LOCAL_SPARK

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The count a policy acts on, before and after, for the audit: data files for compaction, snapshots for expiry.
_COUNTED = {DATA_COMPACTION: "data_files", SNAPSHOT_EXPIRY: "snapshots"}
ORPHANS_LISTED = 100  # orphan locations recorded per job; the count is always complete
_MAINTENANCE_SPARK = {
    **LOCAL_SPARK,
    "spark.sql.extensions": ICEBERG_EXTENSIONS,
    "spark.sql.session.timeZone": "UTC",  # the procedures' timestamp literals are UTC
}


@dataclass(frozen=True)
class CatalogAccess:
    """How Spark reaches catalog-es: its REST URI and, with authentication on, OAuth2 client credentials.

    `credential` is `<client id>:<client secret>`; Iceberg's REST client exchanges it at `oauth2_server_uri`
    and refreshes the token itself, so a long job never outlives its token.
    """

    uri: str
    credential: str | None = None
    oauth2_server_uri: str | None = None
    scope: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)

    def options(self) -> dict[str, str]:
        options = {"cache-enabled": "false", **self.extra}
        if self.credential:
            options["credential"] = self.credential
            if self.oauth2_server_uri:
                options["oauth2-server-uri"] = self.oauth2_server_uri
            if self.scope:
                options["scope"] = self.scope
        return options


@dataclass(frozen=True)
class JobOutcome:
    """What one procedure did: its figures and how long it took."""

    changes: dict[str, Any]
    seconds: float


def maintenance_session(
    master: str, jars: Sequence[Path] = (), packages: str | None = None, conf: Mapping[str, str] | None = None
) -> SparkSession:
    """The worker's one SparkSession; catalogs are registered per warehouse when a job needs one."""
    from pyspark.sql import SparkSession  # noqa: PLC0415 - pyspark is an optional extra, loaded on demand

    settings = dict(_MAINTENANCE_SPARK)
    if packages:
        settings["spark.jars.packages"] = packages
    elif jars:
        settings["spark.jars"] = ",".join(str(jar) for jar in jars)
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName("catalog-es-maintenance")
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


class MaintenanceRunner:
    """Runs maintenance jobs on one session; safe to call from several threads (Spark schedules them together)."""

    def __init__(self, spark: SparkSession, access: CatalogAccess, *, orphan_floor_seconds: float) -> None:
        self.spark = spark
        self.access = access
        self.orphan_floor_seconds = orphan_floor_seconds
        self._catalogs: dict[str, str] = {}  # warehouse -> its Spark catalog's name
        self._lock = threading.Lock()

    def _catalog(self, warehouse: str) -> str:
        """The Spark catalog of `warehouse` (`<project id>/<name>`, as `/config?warehouse=` reads it)."""
        with self._lock:
            name = self._catalogs.get(warehouse)
            if name is None:
                name = f"maintenance_{len(self._catalogs)}"
                conf = catalog_conf(self.access.uri, warehouse, catalog=name)
                conf.pop("spark.sql.extensions")  # a static conf, set on the session already
                conf.update({f"spark.sql.catalog.{name}.{key}": value for key, value in self.access.options().items()})
                for key, value in conf.items():
                    self.spark.conf.set(key, value)
                # Load it now, so a catalog that cannot start fails here with its own error: the Java API behind
                # orphan removal would instead fall back silently to the session catalog.
                self.spark.sql(f"SHOW NAMESPACES IN {quote_identifier([name])}").collect()
                self._catalogs[warehouse] = name
        return name

    def run(
        self,
        warehouse: str,
        table: Sequence[str],
        policy_type: str,
        content: Mapping[str, Any],
        *,
        now_ms: int,
        job_id: str = "",
    ) -> JobOutcome:
        """Run one policy on one table; an exception means nothing was committed (Iceberg commits atomically).

        The Spark jobs it starts belong to the job group `job_id` (a thread-local property in PySpark's pinned
        thread mode), so `cancel(job_id)` from another thread interrupts them.
        """
        started = time.monotonic()
        if job_id:
            self.spark.sparkContext.setJobGroup(job_id, f"catalog-es maintenance {policy_type}", interruptOnCancel=True)
        catalog = self._catalog(warehouse)
        if policy_type == ORPHAN_FILE_REMOVAL:
            cutoff = orphan_cutoff_ms(now_ms, content.get("older-than-seconds"), self.orphan_floor_seconds)
            rows = self._remove_orphans(catalog, table, cutoff)
            changes: dict[str, Any] = dict(changes_of(policy_type, rows))
            changes["orphan-file-locations"] = [row["orphan_file_location"] for row in rows[:ORPHANS_LISTED]]
            changes["older-than-ms"] = cutoff
        else:
            call = procedure_call(policy_type, catalog, table, content, now_ms=now_ms)
            label = _COUNTED.get(policy_type)
            before = self._count(catalog, table, label) if label else None
            rows = [row.asDict() for row in self.spark.sql(call.sql).collect()]
            changes = dict(changes_of(policy_type, rows))
            if label:
                changes[f"{label.replace('_', '-')}-before"] = before
                changes[f"{label.replace('_', '-')}-after"] = self._count(catalog, table, label)
        return JobOutcome(changes=changes, seconds=round(time.monotonic() - started, 3))

    def cancel(self, job_id: str) -> None:
        """Cancel the Spark jobs of `run(..., job_id=job_id)` (its lease is lost): `run` then raises."""
        self.spark.sparkContext.cancelJobGroup(job_id)

    def _remove_orphans(self, catalog: str, table: Sequence[str], older_than_ms: int) -> list[dict[str, str]]:
        """`SparkActions.deleteOrphanFiles`, the action behind `remove_orphan_files`, without its 24-hour minimum."""
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        session = self.spark._jsparkSession
        loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(session, quote_identifier([catalog, *table]))
        action = jvm.org.apache.iceberg.spark.actions.SparkActions.get(session).deleteOrphanFiles(loaded)
        result = action.olderThan(older_than_ms).execute()
        return [{"orphan_file_location": str(location)} for location in result.orphanFileLocations()]

    def _count(self, catalog: str, table: Sequence[str], metadata_table: str) -> int:
        name = quote_identifier([catalog, *table, metadata_table])
        return int(self.spark.sql(f"SELECT count(*) AS n FROM {name}").collect()[0]["n"])
