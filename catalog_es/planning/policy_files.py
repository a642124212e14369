"""Policy files: the rows and columns a read policy allows of one data file, copied under the table for readers
that ignore residuals, so a plan never hands a principal under a policy a file holding anything it may not read."""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor

import msgspec
import pyarrow.parquet as pq
from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.expressions.visitors import residual_evaluator_of
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import (
    ArrowScan,
    DataFileStatistics,
    ParquetFormatWriter,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
    schema_to_pyarrow,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import prune_columns
from pyiceberg.table import FileScanTask
from pyiceberg.table.metadata import TableMetadata

from catalog_es.metadata.pyiceberg_compat import StrictMetricsEvaluator
from catalog_es.planning.policy import ReadPolicy
from catalog_es.storage.purge import POLICY_FILES_DIR

_WORKERS = 4  # files copied at once per plan (each one read whole into memory)
_WRITING = tuple(threading.Lock() for _ in range(64))  # per process, striped by a copy's digest


def policy_files_location(table_location: str, policy: ReadPolicy) -> str:
    """Where one policy's copies of a table's files live: `<table>/policy-files/<policy fingerprint>`. Everything
    in it is rows and columns that policy allows, so storage access for a principal under it (vended
    credentials, remote signing) is scoped to this prefix: a new policy is a new prefix."""
    return f"{table_location.rstrip('/')}/{POLICY_FILES_DIR}/{policy.fingerprint()}"


def _object_store(location: str) -> bool:
    """Whether the table lives in an object store (`s3://`, `abfss://`, `gs://`, ...), not on a file system."""
    scheme, separator, _ = location.partition("://")
    return bool(separator) and scheme != "file"


class PolicyFiles:
    """Rewrites one plan's tasks for one principal's policy.

    A task whose file may hold a row the policy's filter rejects (its partition and column bounds cannot prove
    otherwise), or a column the policy hides, is replaced by a copy of that file holding only the allowed rows
    and columns, delete files applied, at `policy_files_location(...)/<digest>.parquet`. In an object store every
    task's file is copied (storage access under a policy reaches that prefix only, so the plan must lie in it).
    The digest names the data file, its delete files and the schema (the prefix names the policy), which never
    change for a snapshot: a copy once written is found again by any replica (its footer read for the task's
    counts and bounds) and never rewritten. A copy with no row left drops its task. The new task carries no
    delete files and the client's own residual only.
    """

    def __init__(
        self, metadata: TableMetadata, io: FileIO, policy: ReadPolicy, client_filter: BooleanExpression, case: bool
    ) -> None:
        self._metadata, self._io, self._policy = metadata, io, policy
        self._schema = metadata.schema()
        allowed = policy.allowed_ids(self._schema)
        self._output = self._schema if allowed is None else prune_columns(self._schema, allowed, False)
        self._hides = set(self._output.field_ids) != set(self._schema.field_ids)
        self._copy_all = _object_store(metadata.location)
        self._prefix = policy_files_location(metadata.location, policy)
        self._strict = StrictMetricsEvaluator(self._schema, policy.row_filter)
        self._client_filter, self._case = client_filter, case
        self._salt = msgspec.json.encode([self._schema.schema_id, sorted(self._output.field_ids)]).decode()

    def apply(self, tasks: list[FileScanTask]) -> list[FileScanTask]:
        """The tasks a reader ignoring residuals may be handed. Blocking (reads and writes files)."""
        with ThreadPoolExecutor(_WORKERS) as pool:
            rewritten = list(pool.map(self._task, tasks))
        return [task for task in rewritten if task is not None]

    def _task(self, task: FileScanTask) -> FileScanTask | None:
        if not (self._copy_all or self._hides) and self._allows_every_row(task.file):
            return task
        copy = self._copy(task)
        if copy.record_count == 0:
            return None
        residual = self._client_residual(task.file)
        return FileScanTask(copy, set(), residual)

    def _allows_every_row(self, data_file: DataFile) -> bool:
        spec = self._metadata.specs()[data_file.spec_id]
        evaluator = residual_evaluator_of(spec, self._policy.row_filter, True, self._schema)
        return evaluator.residual_for(data_file.partition) == AlwaysTrue() or self._strict.eval(data_file)

    def _client_residual(self, data_file: DataFile) -> BooleanExpression:
        spec = self._metadata.specs()[data_file.spec_id]
        return residual_evaluator_of(spec, self._client_filter, self._case, self._schema).residual_for(
            data_file.partition
        )

    def _path(self, task: FileScanTask) -> str:
        name = msgspec.json.encode([task.file.file_path, sorted(d.file_path for d in task.delete_files), self._salt])
        digest = hashlib.sha256(name).hexdigest()[:40]
        return f"{self._prefix}/{digest}.parquet"

    def _copy(self, task: FileScanTask) -> DataFile:
        path = self._path(task)
        # Two plans of one policy (other filters) may need the same copy at once: one writes, the other reads it.
        with _WRITING[int(path.rsplit("/", 1)[-1][:8], 16) % len(_WRITING)]:
            found = self._existing(path)
            if found is not None:
                return self._data_file(task, path, *found)
            rows = ArrowScan(self._metadata, self._io, self._output, self._policy.row_filter, True).to_table([task])
            output = self._io.new_output(path)
            writer = ParquetFormatWriter(output, self._output, self._metadata.properties)
            with writer:
                writer.write(rows.cast(schema_to_pyarrow(self._output, include_field_ids=True)))
            return self._data_file(task, path, writer.result(), len(output))

    def _existing(self, path: str) -> tuple[DataFileStatistics, int] | None:
        """A copy already written (by this or another replica): its statistics from its footer. None when
        there is none, or it is unreadable (a write cut short): it is written again."""
        source = self._io.new_input(path)
        if not source.exists():
            return None
        try:
            with source.open() as stream:
                footer = pq.read_metadata(stream)
        except (OSError, ValueError):
            return None
        statistics = data_file_statistics_from_parquet_metadata(
            parquet_metadata=footer,
            stats_columns=compute_statistics_plan(self._output, self._metadata.properties),
            parquet_column_mapping=parquet_path_to_id_mapping(self._output),
        )
        return statistics, len(source)

    @staticmethod
    def _data_file(task: FileScanTask, path: str, statistics: DataFileStatistics, size: int) -> DataFile:
        copy = DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=path,
            file_format=FileFormat.PARQUET,
            partition=task.file.partition,
            file_size_in_bytes=size,
            sort_order_id=None,
            equality_ids=None,
            key_metadata=None,
            **statistics.to_serialized_dict(),
        )
        copy.spec_id = task.file.spec_id  # not a manifest field: set beside it, as pyiceberg's writers do
        return copy
