"""Server-side rebase of commutative commits (issue 19): which commits qualify, and the rebased snapshots.

A commit whose only failed requirement is `assert-ref-snapshot-id` (the branch moved since the client's
base) is what Iceberg's client would refresh and retry. When its new snapshots commute with everything
committed since the base, the server can do that retry itself: the same data and delete manifests, on a
manifest list re-derived from the current head, with fresh sequence numbers (and on v3 fresh row ids) and
recomputed totals. These are the pure decisions; `catalog_es.storage.rebase_files` does the reading and
writing of manifest lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pydantic
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.manifest import UNASSIGNED_SEQ, ManifestContent, ManifestEntry, ManifestFile
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, Summary, update_snapshot_summaries
from pyiceberg.table.update import (
    AddSnapshotUpdate,
    AssertRefSnapshotId,
    SetSnapshotRefUpdate,
    TableRequirement,
    TableUpdate,
)
from pyiceberg.typedef import Record

from catalog_es.events import Json
from catalog_es.metadata.manifest_row_ids import has_row_id_field, with_first_row_id

REBASE_PROPERTY = "catalog-es.server-side-rebase"
# The table owner's word that overwrites and deletes never reach beyond the partitions whose files they change
# (their filters are partition filters): partition-disjointness then decides alone, as the issue asks.
PARTITION_SCOPED_PROPERTY = "catalog-es.server-side-rebase.partition-scoped-overwrites"
_REPLACE_PARTITIONS = "replace-partitions"  # Java's summary flag of a dynamic partition overwrite
RebaseMode = Literal["off", "opt-in", "on"]
_COMMUTING_OPERATIONS = (Operation.APPEND, Operation.OVERWRITE, Operation.DELETE)
_TOTALS_PREFIX = "total-"
_REQUIREMENTS = pydantic.TypeAdapter(list[TableRequirement])
_UPDATES = pydantic.TypeAdapter(list[TableUpdate])

PartitionKey = tuple[int, tuple[Any, ...]]


def rebase_enabled(mode: RebaseMode, properties: Mapping[str, Any]) -> bool:
    """`on`: every table unless its property says `false`; `opt-in`: tables whose property says `true`."""
    choice = str(properties.get(REBASE_PROPERTY, "")).strip().lower()
    if mode == "on":
        return choice != "false"
    return mode == "opt-in" and choice == "true"


@dataclass(frozen=True)
class RebasePlan:
    """A commit that may be rebased: its snapshots (oldest first) and what landed on the branch since its base."""

    ref: str
    original_base: int | None
    head: Snapshot
    snapshots: tuple[Snapshot, ...]
    concurrent: tuple[Snapshot, ...]
    requirements: list[Json]
    updates: list[TableUpdate]
    partition_scoped: bool = False

    @property
    def scoped_to_partitions(self) -> bool:
        """Whether every overwrite or delete of the commit is known to act on whole partitions only: a dynamic
        partition overwrite (`replace-partitions`), or any, on a table whose owner said so (its property)."""
        return self.partition_scoped or all(
            snapshot.summary is None
            or snapshot.summary.operation == Operation.APPEND
            or snapshot.summary.additional_properties.get(_REPLACE_PARTITIONS) == "true"
            for snapshot in self.snapshots
        )

    @property
    def append_only(self) -> bool:
        """Fast appends commute with anything; others need the partition check (`conflicting`)."""
        return all(
            snapshot.summary is not None and snapshot.summary.operation == Operation.APPEND
            for snapshot in self.snapshots
        )


def plan_rebase(current: TableMetadata, requirements: list[Json], updates: list[Json]) -> RebasePlan | None:
    """The rebase of a commit that failed on `current`, or None when it must stay a conflict (409).

    Qualifies (any format version): every requirement holds except one `assert-ref-snapshot-id` on a branch
    whose asserted snapshot is an ancestor of the branch's head; the updates are only `add-snapshot`s chained
    from that base and `set-snapshot-ref`s of that branch to them; each snapshot an append, overwrite or
    delete on the current schema.
    """
    try:
        parsed_requirements = _REQUIREMENTS.validate_python(requirements)
        parsed_updates = _UPDATES.validate_python(updates)
    except (pydantic.ValidationError, TypeError, ValueError):
        return None
    stale = _only_stale_ref(current, parsed_requirements)
    if stale is None:
        return None
    head = current.snapshot_by_name(stale.ref)
    snapshots = _snapshot_chain(current, stale, parsed_updates)
    concurrent = _since(current, head, stale.snapshot_id) if head is not None else None
    if head is None or snapshots is None or concurrent is None:
        return None
    kept = [requirement for requirement in requirements if requirement.get("type") != "assert-ref-snapshot-id"]
    return RebasePlan(
        ref=stale.ref,
        original_base=stale.snapshot_id,
        head=head,
        snapshots=snapshots,
        concurrent=concurrent,
        requirements=[*kept, {"type": "assert-ref-snapshot-id", "ref": stale.ref, "snapshot-id": head.snapshot_id}],
        updates=parsed_updates,
        partition_scoped=str(current.properties.get(PARTITION_SCOPED_PROPERTY, "")).strip().lower() == "true",
    )


def _only_stale_ref(current: TableMetadata, requirements: list[TableRequirement]) -> AssertRefSnapshotId | None:
    """The one failed requirement if it is a branch's `assert-ref-snapshot-id`, else None."""
    failed = []
    for requirement in requirements:
        try:
            requirement.validate(current)
        except CommitFailedException:
            failed.append(requirement)
    if len(failed) != 1 or not isinstance(stale := failed[0], AssertRefSnapshotId):
        return None
    ref = current.refs.get(stale.ref)
    if ref is None or ref.snapshot_ref_type != SnapshotRefType.BRANCH:
        return None
    return stale


def _snapshot_chain(
    current: TableMetadata, stale: AssertRefSnapshotId, updates: list[TableUpdate]
) -> tuple[Snapshot, ...] | None:
    """The added snapshots if they chain from the asserted base and the branch ends on the last of them."""
    snapshots: list[Snapshot] = []
    ref_targets: list[int] = []
    for update in updates:
        if isinstance(update, AddSnapshotUpdate):
            snapshots.append(update.snapshot)
        elif (
            isinstance(update, SetSnapshotRefUpdate)
            and update.ref_name == stale.ref
            and update.type == SnapshotRefType.BRANCH
        ):
            ref_targets.append(update.snapshot_id)
        else:
            return None
    if not snapshots or not ref_targets or ref_targets[-1] != snapshots[-1].snapshot_id:
        return None
    parent = stale.snapshot_id
    for snapshot in snapshots:
        if (
            snapshot.parent_snapshot_id != parent
            or current.snapshot_by_id(snapshot.snapshot_id) is not None
            or snapshot.summary is None
            or snapshot.summary.operation not in _COMMUTING_OPERATIONS
            or snapshot.schema_id not in (None, current.current_schema_id)
        ):
            return None
        parent = snapshot.snapshot_id
    return tuple(snapshots)


def _since(current: TableMetadata, head: Snapshot, base: int | None) -> tuple[Snapshot, ...] | None:
    """The snapshots from `base` (exclusive) to `head`, oldest first; None when `base` is not an ancestor."""
    found: list[Snapshot] = []
    snapshot: Snapshot | None = head
    while snapshot is not None and snapshot.snapshot_id != base:
        found.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = current.snapshot_by_id(parent) if parent is not None else None
        if parent is not None and snapshot is None:
            return None  # history expired below: the base cannot be shown to be an ancestor
    if snapshot is None and base is not None:
        return None
    return tuple(reversed(found))


def rebased_manifests(
    base: Sequence[ManifestFile],
    head: Sequence[ManifestFile],
    client_lists: Sequence[Sequence[ManifestFile]],
    snapshots: Sequence[Snapshot],
    default_spec_id: int,
) -> list[list[ManifestFile]] | None:
    """Each client snapshot's manifest list re-derived on `head`; None when the manifests do not commute.

    A client list is its own new manifests plus what it kept of its parent's list. Rebased, it is the same
    new manifests plus the rebased parent's list minus the manifests the client dropped (rewritten by an
    overwrite or a merge, or holding deleted entries only). A dropped manifest with live files that is no
    longer in the rebased parent was rewritten by a concurrent commit too, so its files would be listed
    twice: a conflict. New manifests get their sequence numbers (and on v3 their `first_row_id`) unassigned
    again, for the manifest-list writer to assign the rebased ones (entries added by the commit inherit them:
    spec "Sequence Number Inheritance", "Row Lineage"); the head's manifests keep theirs.
    """
    parent_client = list(base)
    parent_rebased = list(head)
    rebased: list[list[ManifestFile]] = []
    for snapshot, listed in zip(snapshots, client_lists, strict=True):
        own = [manifest for manifest in listed if manifest.added_snapshot_id == snapshot.snapshot_id]
        kept = {manifest.manifest_path for manifest in listed if manifest.added_snapshot_id != snapshot.snapshot_id}
        parent_paths = {manifest.manifest_path for manifest in parent_client}
        if any(manifest.partition_spec_id != default_spec_id for manifest in own) or not kept <= parent_paths:
            return None
        if _is_append(snapshot) and any(
            manifest.content != ManifestContent.DATA or manifest.deleted_files_count for manifest in own
        ):
            return None  # an "append" that deletes is not a fast append
        dropped = parent_paths - kept
        live_dropped = {m.manifest_path for m in parent_client if m.manifest_path in dropped and _has_live_files(m)}
        if not live_dropped <= {manifest.manifest_path for manifest in parent_rebased}:
            return None
        new_list = [_unassigned(manifest, snapshot) for manifest in own]
        new_list += [manifest for manifest in parent_rebased if manifest.manifest_path not in dropped]
        rebased.append(new_list)
        parent_client = list(listed)
        parent_rebased = new_list
    return rebased


def _has_live_files(manifest: ManifestFile) -> bool:
    """False for a manifest of deleted entries only, which writers drop from the next list (pyiceberg's and
    Java's fast append): dropping it again, or once more than others did, loses nothing."""
    return manifest.has_added_files() or manifest.has_existing_files()


def _is_append(snapshot: Snapshot) -> bool:
    return snapshot.summary is not None and snapshot.summary.operation == Operation.APPEND


def _unassigned(manifest: ManifestFile, snapshot: Snapshot) -> ManifestFile:
    """The client's manifest with the sequence numbers and the first row id its commit assigned unassigned again.

    The minimum is the commit's own number when every entry inherits it; older explicit numbers (existing
    or deleted entries of a rewritten manifest) stay. A v3 manifest the commit wrote has no row ids of its
    own before its list is written (as in Java's retry, which lists the same new manifests again): the
    client's list gave it ids from the client's stale base, the rebased list gives it the next free ones.
    """
    if has_row_id_field(manifest):
        manifest = with_first_row_id(manifest, None)
    unassigned = ManifestFile(*_values(manifest))  # not `copy`: it would share the client's field list
    if snapshot.sequence_number is not None and manifest.sequence_number == snapshot.sequence_number:
        unassigned.sequence_number = UNASSIGNED_SEQ
    if snapshot.sequence_number is not None and manifest.min_sequence_number == snapshot.sequence_number:
        unassigned.min_sequence_number = UNASSIGNED_SEQ
    return unassigned


def as_written(manifests: Sequence[ManifestFile], sequence_number: int) -> list[ManifestFile]:
    """The list as the manifest-list writer stores it: unassigned sequence numbers become the commit's."""
    written = []
    for manifest in manifests:
        fresh = ManifestFile(*_values(manifest))
        if fresh.sequence_number == UNASSIGNED_SEQ:
            fresh.sequence_number = sequence_number
        if fresh.min_sequence_number == UNASSIGNED_SEQ:
            fresh.min_sequence_number = sequence_number
        written.append(fresh)
    return written


def touched_partitions(entries: Iterable[ManifestEntry]) -> set[PartitionKey]:
    """The partitions (spec id and values) of the files these entries add or remove."""
    return {(entry.data_file.spec_id, _values(entry.data_file.partition)) for entry in entries}


def _values(partition: Record) -> tuple[Any, ...]:
    return tuple(partition[position] for position in range(len(partition)))


def conflicting(
    client: set[PartitionKey], concurrent: set[PartitionKey], *, scoped: bool, concurrent_added_data: bool
) -> bool:
    """Whether an overwrite or delete may not commute with what was committed since its base.

    As Iceberg's `validateAddedDataFiles`/`validateNoNewDeleteFiles`/`validateDeletedDataFiles` with the
    touched partitions as conflict filter: any file added or removed there since the base conflicts. That
    filter is only right when the operation's own filter stays within those partitions (`scoped`): the
    server never sees the filter, and a delete of `id < 100` that changed files in one partition would, on a
    client's retry, also delete a matching row appended concurrently to another. Unscoped, such an operation
    commutes only when nothing since its base added data files: the rows its filter saw are all there were.
    """
    return not client.isdisjoint(concurrent) or (not scoped and concurrent_added_data)


@dataclass(frozen=True)
class AssignedRows:
    """The row ids a v3 snapshot assigned (spec "Row Lineage"): `added_rows` of them from `first_row_id`."""

    first_row_id: int
    added_rows: int


def rebased_snapshot(
    client: Snapshot,
    parent: Snapshot,
    sequence_number: int,
    manifest_list: str,
    timestamp_ms: int,
    rows: AssignedRows | None = None,
) -> Snapshot:
    """The client's snapshot on `parent`: same id and changes, new parent, sequence number, list and totals.

    Totals are the parent's plus the client's added/removed counts (pyiceberg's `update_snapshot_summaries`);
    the timestamp is never behind the parent's, as the snapshot log must stay ordered. On v3, `rows` are the
    ids the rebased manifest list assigned: the snapshot's `first-row-id` and `added-rows`, as Java's
    `SnapshotProducer` sets them from its list writer (the client's, from its stale base, would overlap the
    ids the head's snapshots assigned).
    """
    assert client.summary is not None  # checked by plan_rebase
    summary = client.summary.additional_properties
    changes = {key: value for key, value in summary.items() if not key.startswith(_TOTALS_PREFIX)}
    recomputed = update_snapshot_summaries(Summary(client.summary.operation, **changes), parent.summary)
    return client.model_copy(
        update={
            "parent_snapshot_id": parent.snapshot_id,
            "sequence_number": sequence_number,
            "manifest_list": manifest_list,
            "summary": recomputed,
            "timestamp_ms": max(timestamp_ms, client.timestamp_ms, parent.timestamp_ms),
            **({"first_row_id": rows.first_row_id, "added_rows": rows.added_rows} if rows is not None else {}),
        }
    )


def rebased_updates(plan: RebasePlan, snapshots: Sequence[Snapshot]) -> list[Json]:
    """The client's updates with its snapshots replaced by the rebased ones (ids unchanged, so the
    `set-snapshot-ref`s stay as they were)."""
    by_id = {snapshot.snapshot_id: snapshot for snapshot in snapshots}
    updates = [
        AddSnapshotUpdate(snapshot=by_id[update.snapshot.snapshot_id])
        if isinstance(update, AddSnapshotUpdate)
        else update
        for update in plan.updates
    ]
    return [update.model_dump(mode="json", by_alias=True, exclude_none=True) for update in updates]
