"""Plan one scan with pyiceberg's own manifest pruning and hand back its tasks as pages of the spec's JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from pyiceberg.expressions import AlwaysTrue, BooleanExpression
from pyiceberg.io import FileIO
from pyiceberg.table import FileScanTask, IncrementalAppendScan, ManifestGroupPlanner
from pyiceberg.table.metadata import TableMetadata

from catalog_es.errors import BadRequestError, UnsupportedOperationError
from catalog_es.planning.content_files import ContentFiles
from catalog_es.planning.policy import ReadPolicy
from catalog_es.planning.policy_files import PolicyFiles
from catalog_es.planning.request import ScanRequest, expression_json


@dataclass(frozen=True)
class PlannedScan:
    """A finished plan: `pages[i]` is the JSON of one ScanTasks object (its delete files, its file scan tasks).

    Pages are encoded once, when planned, so serving one (first answer, plan task, cached repeat) copies bytes.
    """

    pages: tuple[bytes, ...]
    data_files: int
    delete_files: int

    @property
    def size(self) -> int:
        return sum(len(page) for page in self.pages)


def resolve_snapshot(metadata: TableMetadata, request: ScanRequest) -> ScanRequest:
    """The request with its snapshot pinned (the main branch's current one when it names none), so its cache
    key and plan tasks name a snapshot, which never changes.

    Raises: BadRequestError for a snapshot the table does not have.
    """
    if request.incremental:
        for snapshot_id in (request.start_snapshot_id, request.end_snapshot_id):
            if snapshot_id is not None and metadata.snapshot_by_id(snapshot_id) is None:
                raise BadRequestError(f"Snapshot {snapshot_id} does not exist in this table")
        return request
    if request.snapshot_id is None:
        current = metadata.current_snapshot()
        return msgspec.structs.replace(request, snapshot_id=-1 if current is None else current.snapshot_id)
    if metadata.snapshot_by_id(request.snapshot_id) is None:
        raise BadRequestError(f"Snapshot {request.snapshot_id} does not exist in this table")
    return request


def plan_scan(
    metadata: TableMetadata, io: FileIO, request: ScanRequest, policy: ReadPolicy | None, page_size: int
) -> PlannedScan:
    """Prune manifests and files (partition summaries, partition values, column metrics) with pyiceberg's
    ManifestGroupPlanner, attach each data file's delete files (its DeleteFileIndex), and keep pyiceberg's
    residual per file. Under a policy the planned filter is the client's AND the policy's row filter (files with
    no allowed row are pruned), and every file that may hold a row or column the policy hides is replaced by its
    policy file (`PolicyFiles`): a reader that ignores residuals still gets only the allowed rows and columns.

    Blocking (reads manifests, may write policy files): run it in a thread. `request` has its snapshot resolved.

    Raises:
        BadRequestError: unknown columns in `select` or the filter.
        NotAuthorizedError: the policy hides a selected or filtered column.
        UnsupportedOperationError: equality deletes (pyiceberg cannot plan them yet).
    """
    schema_metadata = _with_scan_schema(metadata, request)
    schema = schema_metadata.schema()
    client_filter = request.expression()
    select = request.select
    if policy is not None:
        select, row_filter = policy.enforce(schema, select, client_filter, request.case_sensitive)
    else:
        row_filter = client_filter
        if select is not None:
            _check_columns(schema_metadata, select, request.case_sensitive)
    try:
        tasks = list(_tasks(schema_metadata, io, request, row_filter))
    except ValueError as exc:
        if "equality deletes" in str(exc):
            raise UnsupportedOperationError(f"Cannot plan this scan on the server: {exc}") from None
        raise BadRequestError(f"Cannot plan this scan: {exc}") from None
    if policy is not None:
        tasks = PolicyFiles(schema_metadata, io, policy, client_filter, request.case_sensitive).apply(tasks)
    files = ContentFiles(schema, schema_metadata.specs())
    pages = tuple(_page(files, tasks[start : start + page_size]) for start in range(0, len(tasks), page_size))
    deletes = len({path for task in tasks for path in (d.file_path for d in task.delete_files)})
    return PlannedScan(pages or (_page(files, []),), len(tasks), deletes)


def _with_scan_schema(metadata: TableMetadata, request: ScanRequest) -> TableMetadata:
    """`use-snapshot-schema`: bind to the schema the snapshot was written with (time travel), else the current."""
    if not request.use_snapshot_schema or request.snapshot_id is None:
        return metadata
    snapshot = metadata.snapshot_by_id(request.snapshot_id)
    if snapshot is None or snapshot.schema_id is None or snapshot.schema_id == metadata.current_schema_id:
        return metadata
    return metadata.model_copy(update={"current_schema_id": snapshot.schema_id})


def _check_columns(metadata: TableMetadata, select: list[str], case_sensitive: bool) -> None:
    schema = metadata.schema()
    for name in select:
        try:
            schema.find_field(name, case_sensitive=case_sensitive)
        except ValueError:
            raise BadRequestError(f"Cannot select unknown column {name!r}") from None


def _tasks(
    metadata: TableMetadata, io: FileIO, request: ScanRequest, row_filter: BooleanExpression
) -> list[FileScanTask]:
    if request.incremental:
        scan = IncrementalAppendScan(
            metadata,
            io,
            row_filter=row_filter,
            case_sensitive=request.case_sensitive,
            from_snapshot_id=request.start_snapshot_id,
            to_snapshot_id=request.end_snapshot_id,
        )
        return list(scan.plan_files())
    snapshot = None if request.snapshot_id in (None, -1) else metadata.snapshot_by_id(request.snapshot_id)
    if snapshot is None:
        return []
    planner = ManifestGroupPlanner(metadata, io, row_filter=row_filter, case_sensitive=request.case_sensitive)
    return list(planner.plan_files(snapshot.manifests(io)))


def _page(files: ContentFiles, tasks: list[FileScanTask]) -> bytes:
    """One ScanTasks object: the page's delete files once each, referenced by index from its tasks."""
    delete_index: dict[str, int] = {}
    delete_files: list[dict[str, Any]] = []
    scan_tasks: list[dict[str, Any]] = []
    for task in tasks:
        references = []
        for delete_file in sorted(task.delete_files, key=lambda d: d.file_path):
            index = delete_index.get(delete_file.file_path)
            if index is None:
                index = delete_index[delete_file.file_path] = len(delete_files)
                delete_files.append(files.document(delete_file, stats=False))
            references.append(index)
        scan_task: dict[str, Any] = {"data-file": files.document(task.file)}
        if references:
            scan_task["delete-file-references"] = references
        # Left out when the file's partition already satisfies the whole filter (a policy's rows filter too):
        # the client then applies its own filter, which keeps the same rows there. (pyiceberg 0.12 cannot
        # even parse a `true` residual in a plan.)
        if task.residual is not None and task.residual != AlwaysTrue():
            scan_task["residual-filter"] = expression_json(task.residual)
        scan_tasks.append(scan_task)
    return msgspec.json.encode({"delete-files": delete_files, "file-scan-tasks": scan_tasks})
