"""Every fact the catalog records: stable, versioned event types with typed payloads."""

from __future__ import annotations

import uuid
from typing import Literal

import msgspec

from catalog_es.events.base import Event, Json, SecretReference

SERVER_STREAM_ENTITY = uuid.UUID(int=0)


class ServerBootstrapped(Event, frozen=True, kw_only=True):
    """The one-time bootstrap: the server got its id; the actor (in the event metadata) is its first admin."""

    type_name = "io.catalog-es.server.bootstrapped.v1"
    stream_kind = "server"
    server_id: uuid.UUID
    is_operator: bool = False
    user_name: str | None = None
    user_email: str | None = None
    user_type: str | None = None

    @property
    def entity_id(self) -> uuid.UUID:
        return SERVER_STREAM_ENTITY  # one stream for the server, so a second bootstrap fails the version check


class ProjectEvent(Event, frozen=True, kw_only=True):
    stream_kind = "project"
    project_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.project_id


class ProjectCreated(ProjectEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.project.created.v1"
    name: str


class ProjectRenamed(ProjectEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.project.renamed.v1"
    name: str


class ProjectDeleted(ProjectEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.project.deleted.v1"


class WarehouseEvent(Event, frozen=True, kw_only=True):
    stream_kind = "warehouse"
    warehouse_id: uuid.UUID
    project_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.warehouse_id


class WarehouseCreated(WarehouseEvent, frozen=True, kw_only=True):
    """`storage_profile` holds no secrets; the credential, if any, is only referenced."""

    type_name = "io.catalog-es.warehouse.created.v1"
    name: str
    storage_profile: Json
    storage_credential: SecretReference | None = None
    delete_profile: Json | None = None  # None: hard deletion


class WarehouseRenamed(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.renamed.v1"
    name: str


class WarehouseDeactivated(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.deactivated.v1"


class WarehouseActivated(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.activated.v1"


class WarehouseStorageUpdated(WarehouseEvent, frozen=True, kw_only=True):
    """A new storage profile (mutable fields only) and the credential in force with it."""

    type_name = "io.catalog-es.warehouse.storage-updated.v1"
    storage_profile: Json
    storage_credential: SecretReference | None = None


class WarehouseCredentialUpdated(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.credential-updated.v1"
    storage_credential: SecretReference | None = None


class WarehouseDeleteProfileUpdated(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.delete-profile-updated.v1"
    delete_profile: Json


class WarehouseServerSideRebaseUpdated(WarehouseEvent, frozen=True, kw_only=True):
    """Which tables of the warehouse get stale commits rebased (issue 19); None: the server's setting decides.

    The modes are `catalog_es.metadata.rebase.RebaseMode`, spelled out here so the stored schema stands alone.
    """

    type_name = "io.catalog-es.warehouse.server-side-rebase-updated.v1"
    mode: Literal["off", "opt-in", "on"] | None = None


class WarehouseScanPlanningUpdated(WarehouseEvent, frozen=True, kw_only=True):
    """Which side plans the scans of the warehouse's tables (issue 33); None: the server's setting decides.

    The modes are `catalog_es.planning.mode.ScanPlanningMode`, spelled out here so the stored schema stands alone.
    """

    type_name = "io.catalog-es.warehouse.scan-planning-updated.v1"
    mode: Literal["client", "server"] | None = None


class WarehouseDeleted(WarehouseEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.warehouse.deleted.v1"


class NamespaceEvent(Event, frozen=True, kw_only=True):
    stream_kind = "namespace"
    namespace_id: uuid.UUID
    warehouse_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.namespace_id


class NamespaceCreated(NamespaceEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.namespace.created.v1"
    namespace: list[str]
    properties: dict[str, str]


class NamespacePropertiesUpdated(NamespaceEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.namespace.properties-updated.v1"
    updated: dict[str, str]
    removed: list[str]


class NamespaceDropped(NamespaceEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.namespace.dropped.v1"


class TableEvent(Event, frozen=True, kw_only=True):
    stream_kind = "table"
    table_id: uuid.UUID
    warehouse_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.table_id


class TableCreated(TableEvent, frozen=True, kw_only=True):
    """A table came into being; `metadata` is the full first metadata, as written to storage."""

    type_name = "io.catalog-es.table.created.v1"
    namespace_id: uuid.UUID
    name: str
    metadata_location: str
    metadata: Json
    updates: list[Json] = []  # noqa: RUF012 - msgspec copies a Struct's mutable default per instance


class TableRegistered(TableEvent, frozen=True, kw_only=True):
    """An existing metadata file was adopted (or, with overwrite, replaced a table's pointer)."""

    type_name = "io.catalog-es.table.registered.v1"
    namespace_id: uuid.UUID
    name: str
    metadata_location: str
    metadata: Json


class CommitRebase(msgspec.Struct, frozen=True, kw_only=True):
    """A commit the server rebased: the branch, the client's base snapshot, and the head it was put on."""

    ref: str
    original_base_snapshot_id: int | None
    new_parent_snapshot_id: int


class TableCommitted(TableEvent, frozen=True, kw_only=True, omit_defaults=True):
    """A commit as a change: the client's requirements and updates and every value the server chose.

    Replay rebuilds the resulting metadata from the previous document (`previous_metadata_location`'s) by applying
    `updates` with pyiceberg's functions at `applied_at_ms`, the clock the commit used; `assigned_ids` are the
    schema/spec/sort-order ids the catalog chose for them (replay chooses the same, the readers show them), and
    `metadata_sha256` (`catalog_es.metadata.table_changes.metadata_digest`) proves the replay gave the document the
    commit wrote. `metadata` is the whole result, recorded deliberately only where replay should not depend on the
    previous document (the table moved, its format version changed); a v1 event always had it.
    A rebased commit records the updates as applied (the rebased snapshots) and `rebased`.
    """

    type_name = "io.catalog-es.table.committed.v2"
    requirements: list[Json]
    updates: list[Json]
    previous_metadata_location: str
    metadata_location: str
    applied_at_ms: int
    metadata_sha256: str | None = None  # None only on an upcast v1 event, which carries the document
    assigned_ids: dict[str, int] = {}  # noqa: RUF012 - msgspec copies a Struct's mutable default per instance
    metadata: Json | None = None
    rebased: CommitRebase | None = None


class TableRenamed(TableEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.table.renamed.v1"
    from_namespace_id: uuid.UUID
    from_name: str
    namespace_id: uuid.UUID
    name: str


class TableDropped(TableEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.table.dropped.v1"
    purge_requested: bool


class ViewEvent(Event, frozen=True, kw_only=True):
    stream_kind = "view"
    view_id: uuid.UUID
    warehouse_id: uuid.UUID

    @property
    def entity_id(self) -> uuid.UUID:
        return self.view_id


class ViewCreated(ViewEvent, frozen=True, kw_only=True):
    """A view came into being; `metadata` is its first metadata, as written to storage."""

    type_name = "io.catalog-es.view.created.v1"
    namespace_id: uuid.UUID
    name: str
    metadata_location: str
    metadata: Json


class ViewRegistered(ViewEvent, frozen=True, kw_only=True):
    """An existing view metadata file was adopted under a name."""

    type_name = "io.catalog-es.view.registered.v1"
    namespace_id: uuid.UUID
    name: str
    metadata_location: str
    metadata: Json


class ViewCommitted(ViewEvent, frozen=True, kw_only=True, omit_defaults=True):
    """A replace as a change: the client's requirements and updates, the clock they were applied at (a re-activated
    version is logged with it) and the digest of the result, as for `TableCommitted`; `metadata` is the whole result
    only where the view moved (and on every upcast v1 event)."""

    type_name = "io.catalog-es.view.committed.v2"
    requirements: list[Json]
    updates: list[Json]
    previous_metadata_location: str
    metadata_location: str
    applied_at_ms: int
    metadata_sha256: str | None = None  # None only on an upcast v1 event, which carries the document
    metadata: Json | None = None


class ViewRenamed(ViewEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.view.renamed.v1"
    from_namespace_id: uuid.UUID
    from_name: str
    namespace_id: uuid.UUID
    name: str


class ViewDropped(ViewEvent, frozen=True, kw_only=True):
    type_name = "io.catalog-es.view.dropped.v1"


CATALOG_EVENTS: tuple[type[Event], ...] = (
    ServerBootstrapped,
    ProjectCreated,
    ProjectRenamed,
    ProjectDeleted,
    WarehouseCreated,
    WarehouseRenamed,
    WarehouseDeactivated,
    WarehouseActivated,
    WarehouseStorageUpdated,
    WarehouseCredentialUpdated,
    WarehouseDeleteProfileUpdated,
    WarehouseServerSideRebaseUpdated,
    WarehouseScanPlanningUpdated,
    WarehouseDeleted,
    NamespaceCreated,
    NamespacePropertiesUpdated,
    NamespaceDropped,
    TableCreated,
    TableRegistered,
    TableCommitted,
    TableRenamed,
    TableDropped,
    ViewCreated,
    ViewRegistered,
    ViewCommitted,
    ViewRenamed,
    ViewDropped,
)
