"""In-memory ports for command handler tests: given rows -> when a command -> then the events it appended.

`FakeStore.transaction` records what a handler appends and keeps it only when the block ends without an
error, as the real event store's transaction does (a stale expected version raises the real store's
`StreamVersionConflictError`); the states answer from plain lists, as the SQL read models would from their
tables. Side tables a handler writes on the transaction's connection (sealed secrets, service-principal secret
hashes) are dicts whose writes wait for the commit, as the SQL rows would. What a fake cannot answer without SQL
(the event log read back, the task queue's rows) it does not pretend to: those handlers' paths are tested against
PostgreSQL.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from catalog_es.clock import SystemClock
from catalog_es.events import Event, Json, TableCreated, TableRegistered, ViewCreated, ViewRegistered
from catalog_es.events.protection import ProtectionSet
from catalog_es.identifiers import NAMESPACE_SEPARATOR, Namespace, name_key
from catalog_es.locations import overlaps
from catalog_es.maintenance.health import TableHealth
from catalog_es.maintenance.jobs import PolicyLevel
from catalog_es.maintenance.ports import Declared
from catalog_es.protection import ProtectableKind, ProtectedObject, Protection
from catalog_es.soft_delete import DeletedNamespaceRow, DeletedTabularRow, DeletedWarehouseRow, Member, Subtree
from catalog_es.state import (
    ClaimConflict,
    NamespaceRow,
    ProjectRow,
    TabularHead,
    TabularKindName,
    TabularRow,
    WarehouseContents,
    WarehouseRow,
)
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.store.eventstore import EventMetadata, StreamVersionConflictError
from catalog_es.store.secrets import SecretNotFoundError, SecretRef
from catalog_es.tabular_kind import kind_of
from commands.context import CommandContext

WAREHOUSE = WarehouseRow(
    id=uuid.UUID(int=1), project_id=uuid.UUID(int=0), name="wh", location="file:///wh", storage_profile={}
)


def within(parts: Sequence[str], key: str) -> bool:
    """Whether the namespace `parts` is the one with key `key` or below it."""
    own = Namespace(tuple(parts)).key
    return own == key or own.startswith(f"{key}{NAMESPACE_SEPARATOR}")


class FakeConnection:
    """A transaction's connection as the side-table fakes use it: their writes wait here for the commit (an error
    drops them, as a rollback drops SQL rows); their reads see committed rows only."""

    def __init__(self) -> None:
        self.on_commit: list[Callable[[], None]] = []


class FakeTransaction:
    def __init__(self, store: FakeStore) -> None:
        self.conn: Any = FakeConnection()
        self.pending: list[tuple[Event, int]] = []
        self._store = store

    def may_have_committed(self, failure: BaseException) -> bool:
        """Nothing is in flight to a server here: a failure always means nothing was appended."""
        del failure
        return False

    async def stream_version(self, stream_id: str) -> int:
        """The stream's version including what this transaction appended, as the real transaction answers."""
        pending = sum(1 for e, _ in self.pending if e.stream_id == stream_id)
        return self._store.version(stream_id) + pending

    async def append(
        self, event: Event, *, expected_version: int, document: Json | None = None, encoded: bytes | None = None
    ) -> None:
        del document, encoded  # the real transaction hands them to the inline projections only
        actual = await self.stream_version(event.stream_id)
        if actual != expected_version:
            raise StreamVersionConflictError(event.stream_id, expected_version, actual)
        self.pending.append((event, actual + 1))


@dataclass
class FakeStore:
    """An event store with no database: `appended` holds the committed events, in order (`appended_metadata`
    the metadata each was committed with: actor, `released_to` …).

    A stream nothing was appended to here is at the version its read-model row says (`given`, read when asked,
    so rows a test adds after building the context count); `projectors` see each committed event, as the real
    store's inline projectors do inside the transaction.
    """

    appended: list[Event] = field(default_factory=list)
    appended_metadata: list[EventMetadata] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)
    projectors: list[Callable[[Event], None]] = field(default_factory=list)
    given: Callable[[], dict[str, int]] = dict

    def version(self, stream_id: str) -> int:
        return self.versions.get(stream_id) or self.given().get(stream_id, 0)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        yield None

    @asynccontextmanager
    async def transaction(self, metadata: EventMetadata, *, serialised: bool = True) -> AsyncIterator[FakeTransaction]:
        del serialised
        tx = FakeTransaction(self)
        yield tx
        for write in tx.conn.on_commit:
            write()
        for event, version in tx.pending:
            self.appended.append(event)
            self.appended_metadata.append(metadata)
            self.versions[event.stream_id] = version
            for project in self.projectors:
                project(event)


@dataclass
class FakeCatalogState:
    """The catalog read model as lists of rows: implements `catalog_es.state.CatalogState`."""

    namespaces: list[NamespaceRow] = field(default_factory=list)
    tabulars: list[TabularRow] = field(default_factory=list)
    warehouses: list[WarehouseRow] = field(default_factory=lambda: [WAREHOUSE])
    projects: list[ProjectRow] = field(default_factory=list)
    server: uuid.UUID | None = None  # the id bootstrap recorded

    async def project_exists(self, conn: Any, project_id: uuid.UUID) -> bool:
        return await self.project(conn, project_id) is not None

    async def project(self, conn: Any, project_id: uuid.UUID) -> ProjectRow | None:
        return next((p for p in self.projects if p.id == project_id), None)

    async def server_id(self, conn: Any) -> uuid.UUID | None:
        return self.server

    async def warehouses_in_project(self, conn: Any, project_id: uuid.UUID) -> list[WarehouseRow]:
        return sorted((w for w in self.warehouses if w.project_id == project_id), key=lambda w: name_key(w.name))

    async def all_warehouses(self, conn: Any) -> list[WarehouseRow]:
        return sorted(self.warehouses, key=lambda w: w.id)

    async def warehouse_contents(self, conn: Any, warehouse_id: uuid.UUID) -> WarehouseContents:
        inside = [t for t in self.tabulars if t.warehouse_id == warehouse_id]
        namespaces = sorted(
            (n for n in self.namespaces if n.warehouse_id == warehouse_id),
            key=lambda n: (-len(n.parts), n.namespace.key),
        )
        return WarehouseContents(
            tables=[(t.id, t.version) for t in inside if t.kind == "table"],
            views=[(t.id, t.version) for t in inside if t.kind == "view"],
            namespaces=[(n.id, n.version) for n in namespaces],
        )

    async def warehouse_by_name(self, conn: Any, project_id: uuid.UUID, name: str) -> WarehouseRow | None:
        return next(
            (w for w in self.warehouses if w.project_id == project_id and name_key(w.name) == name_key(name)), None
        )

    async def warehouse_by_id(self, conn: Any, warehouse_id: uuid.UUID) -> WarehouseRow | None:
        return next((w for w in self.warehouses if w.id == warehouse_id), None)

    async def namespace(self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace) -> NamespaceRow | None:
        return next(
            (n for n in self.namespaces if n.warehouse_id == warehouse_id and n.namespace.key == namespace.key), None
        )

    async def namespace_is_empty(self, conn: Any, row: NamespaceRow) -> bool:
        child = any(n.warehouse_id == row.warehouse_id and n.namespace.parent == row.namespace for n in self.namespaces)
        return not child and not any(t.namespace_id == row.id for t in self.tabulars)

    def _find(
        self, kind: TabularKindName, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return next(
            (
                t
                for t in self.tabulars
                if t.kind == kind
                and t.warehouse_id == warehouse_id
                and Namespace(tuple(t.namespace)).key == namespace.key
                and name_key(t.name) == name_key(name)
            ),
            None,
        )

    async def table(self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace, name: str) -> TabularRow | None:
        return self._find("table", warehouse_id, namespace, name)

    async def table_id_taken(self, conn: Any, table_id: uuid.UUID) -> bool:
        return any(t.kind == "table" and t.id == table_id for t in self.tabulars)

    async def table_head(
        self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularHead | None:
        row = self._find("table", warehouse_id, namespace, name)
        if row is None:
            return None
        fields = msgspec.structs.asdict(row)
        del fields["metadata"]
        return TabularHead(**fields)

    async def table_name_taken(self, conn: Any, namespace_id: uuid.UUID, name: str) -> bool:
        return any(t.namespace_id == namespace_id and name_key(t.name) == name_key(name) for t in self.tabulars)

    async def view(self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace, name: str) -> TabularRow | None:
        return self._find("view", warehouse_id, namespace, name)

    async def view_id_taken(self, conn: Any, view_id: uuid.UUID) -> bool:
        return any(t.kind == "view" and t.id == view_id for t in self.tabulars)

    async def location_taken(
        self, conn: Any, warehouse_id: uuid.UUID, location: str, except_table: uuid.UUID | None = None
    ) -> bool:
        """Another table of the warehouse at the location, above it or below it (the SQL's three cases)."""
        tables = (t for t in self.tabulars if t.kind == "table" and t.warehouse_id == warehouse_id)
        return any(t.id != except_table and overlaps(t.location, location) for t in tables)

    async def table_claim_conflict(
        self,
        conn: Any,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        table_id: uuid.UUID,
        location: str,
    ) -> ClaimConflict | None:
        if await self.table_name_taken(conn, namespace_id, name):
            return "name"
        if await self.table_id_taken(conn, table_id):
            return "id"
        if await self.location_taken(conn, warehouse_id, location, except_table=table_id):
            return "location"
        return None


@dataclass
class FakeProtectionState:
    """The protections read model: the protected ids (names for the messages are the ids).

    `current_version` answers from the catalog's rows (when given) and the store's versions; `apply` is its
    inline projector, so a flag set by a command reads back as the real projection would.
    """

    protected: set[uuid.UUID] = field(default_factory=set)
    catalog: FakeCatalogState | None = None

    async def protection(self, conn: Any, object_id: uuid.UUID) -> Protection:
        return Protection(protected=object_id in self.protected)

    async def protected_inside(
        self, conn: Any, warehouse_id: uuid.UUID, namespace: Namespace | None = None, limit: int = 10
    ) -> list[ProtectedObject]:
        """Without the catalog's rows every protected id counts; with them, those of the warehouse (subtree)."""
        if self.catalog is None:
            return [ProtectedObject("object", object_id, str(object_id)) for object_id in sorted(self.protected)][
                :limit
            ]

        def inside(parts: Sequence[str]) -> bool:
            return namespace is None or within(parts, namespace.key)

        found = [
            ProtectedObject("namespace", n.id, str(n.namespace))
            for n in self.catalog.namespaces
            if n.warehouse_id == warehouse_id and n.id in self.protected and inside(n.parts)
        ]
        found += [
            ProtectedObject(t.kind, t.id, f"{Namespace(tuple(t.namespace))}.{t.name}")
            for t in self.catalog.tabulars
            if t.warehouse_id == warehouse_id and t.id in self.protected and inside(t.namespace)
        ]
        return found[:limit]

    async def current_version(
        self, conn: Any, kind: ProtectableKind, warehouse_id: uuid.UUID, object_id: uuid.UUID
    ) -> int | None:
        catalog = self.catalog
        if catalog is None:
            return None
        if kind == "warehouse":
            return next((w.version for w in catalog.warehouses if w.id == object_id == warehouse_id), None)
        if kind == "namespace":
            rows = [(n.id, n.warehouse_id, n.version) for n in catalog.namespaces]
        else:
            rows = [(t.id, t.warehouse_id, t.version) for t in catalog.tabulars if t.kind == kind]
        return next((v for i, w, v in rows if i == object_id and w == warehouse_id), None)

    def apply(self, event: Event) -> None:
        if isinstance(event, ProtectionSet):
            (self.protected.add if event.protected else self.protected.discard)(event.entity_id)


@dataclass
class FakeAccessState:
    """The permissions read model: direct assignments per object and roles by (project, name key)."""

    granted: dict[uuid.UUID, list[tuple[str, str]]] = field(default_factory=dict)
    roles: dict[tuple[uuid.UUID, str], uuid.UUID] = field(default_factory=dict)

    async def role_by_name(self, conn: Any, project_id: uuid.UUID, name: str) -> uuid.UUID | None:
        return self.roles.get((project_id, name_key(name)))

    async def assignments(self, conn: Any, object_id: uuid.UUID) -> list[tuple[str, str]]:
        return list(self.granted.get(object_id, []))

    async def user_exists(self, conn: Any, user_id: str) -> bool:
        return True

    async def object_kind(self, conn: Any, object_id: uuid.UUID) -> str | None:
        return None


@dataclass
class FakeSoftDeleteState:
    """The soft-deleted read model as lists: implements `catalog_es.soft_delete.SoftDeleteState`.

    `recorded` maps (table id, metadata location) to the metadata that table's events recorded there.
    """

    catalog: FakeCatalogState
    tabulars: list[DeletedTabularRow] = field(default_factory=list)
    namespaces: list[DeletedNamespaceRow] = field(default_factory=list)
    warehouses: list[DeletedWarehouseRow] = field(default_factory=list)
    recorded: dict[tuple[uuid.UUID, str], Json] = field(default_factory=dict)

    async def deleted_tabular(
        self, conn: Any, warehouse_id: uuid.UUID, tabular_id: uuid.UUID
    ) -> DeletedTabularRow | None:
        return next((t for t in self.tabulars if t.warehouse_id == warehouse_id and t.id == tabular_id), None)

    async def deleted_namespace(
        self, conn: Any, warehouse_id: uuid.UUID, namespace_id: uuid.UUID
    ) -> DeletedNamespaceRow | None:
        return next((n for n in self.namespaces if n.warehouse_id == warehouse_id and n.id == namespace_id), None)

    async def deleted_with(
        self, conn: Any, root_id: uuid.UUID
    ) -> tuple[list[DeletedTabularRow], list[DeletedNamespaceRow]]:
        namespaces = [n for n in self.namespaces if root_id in (n.id, n.with_namespace)]
        return [t for t in self.tabulars if t.with_namespace == root_id], sorted(namespaces, key=lambda n: len(n.parts))

    async def live_subtree(self, conn: Any, warehouse_id: uuid.UUID, key: str) -> Subtree:
        namespaces = [n for n in self.catalog.namespaces if n.warehouse_id == warehouse_id and within(n.parts, key)]
        inside = [t for t in self.catalog.tabulars if t.warehouse_id == warehouse_id and within(t.namespace, key)]

        def member(t: TabularRow) -> Member:
            return Member(id=t.id, version=t.version, namespace_id=t.namespace_id, name=t.name, parts=t.namespace)

        return Subtree(
            tables=[member(t) for t in inside if t.kind == "table"],
            views=[member(t) for t in inside if t.kind == "view"],
            namespaces=[
                Member(id=n.id, version=n.version, namespace_id=n.id, name=n.parts[-1], parts=n.parts)
                for n in sorted(namespaces, key=lambda n: -len(n.parts))
            ],
        )

    async def hidden_in(self, conn: Any, warehouse_id: uuid.UUID, key: str) -> list[DeletedTabularRow]:
        return [t for t in self.tabulars if t.warehouse_id == warehouse_id and within(t.namespace, key)]

    async def live_table(self, conn: Any, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> TabularRow | None:
        tables = (t for t in self.catalog.tabulars if t.kind == "table" and t.warehouse_id == warehouse_id)
        return next((t for t in tables if t.id == table_id), None)

    async def recorded_metadata(self, conn: Any, table_id: uuid.UUID, metadata_location: str) -> Json | None:
        return self.recorded.get((table_id, metadata_location))

    async def deleted_warehouse(self, conn: Any, warehouse_id: uuid.UUID) -> DeletedWarehouseRow | None:
        return next((w for w in self.warehouses if w.id == warehouse_id), None)

    async def hidden_in_warehouse(
        self, conn: Any, warehouse_id: uuid.UUID
    ) -> tuple[list[DeletedTabularRow], list[DeletedNamespaceRow]]:
        namespaces = sorted((n for n in self.namespaces if n.warehouse_id == warehouse_id), key=lambda n: -len(n.parts))
        return [t for t in self.tabulars if t.warehouse_id == warehouse_id], namespaces

    async def held_warehouse_locations(self, conn: Any) -> list[str]:
        return [w.location for w in self.warehouses]


@dataclass
class FakeMaintenanceState:
    """What the policy commands read of `catalog_es.maintenance.ports.MaintenanceState`: which objects live in
    which warehouse, and the policies declared on them. The scheduler's reads are not faked (they are SQL
    over health figures): calling them fails the test."""

    objects: dict[uuid.UUID, tuple[PolicyLevel, uuid.UUID]] = field(default_factory=dict)  # id -> (kind, warehouse)
    declared: dict[tuple[uuid.UUID, str], dict[str, Any]] = field(default_factory=dict)  # (object, type) -> content

    async def object_in_warehouse(
        self, conn: Any, kind: PolicyLevel, object_id: uuid.UUID, warehouse_id: uuid.UUID
    ) -> bool:
        return self.objects.get(object_id) == (kind, warehouse_id)

    async def declared_policy(self, conn: Any, object_id: uuid.UUID, policy_type: str) -> dict[str, Any] | None:
        return self.declared.get((object_id, policy_type))

    async def declared_for_tables(self, conn: Any, table_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[Declared]]:
        raise AssertionError("not read by the policy commands")

    async def catch_up(self, conn: Any) -> int:
        raise AssertionError("not read by the policy commands")

    async def candidates(self, conn: Any, warehouse_id: uuid.UUID | None) -> list[TableHealth]:
        raise AssertionError("not read by the policy commands")

    async def lock_scheduling(self, conn: Any) -> None:
        raise AssertionError("not read by the policy commands")

    async def queued_jobs(self, conn: Any, table_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, set[str]]:
        raise AssertionError("not read by the policy commands")


@dataclass
class FakeSecretStore:
    """`catalog_es.store.secrets.SecretStore` as a dict of documents by id (sealing: test_secrets.py, integration)."""

    documents: dict[uuid.UUID, Json] = field(default_factory=dict)
    _next: int = 900

    async def put(self, conn: FakeConnection, document: Json) -> SecretRef:
        self._next += 1
        secret_id = uuid.UUID(int=self._next)
        conn.on_commit.append(lambda: self.documents.__setitem__(secret_id, document))
        return SecretRef(id=secret_id, fingerprint=f"fingerprint-{secret_id.int}")

    async def get(self, conn: Any, secret_id: uuid.UUID) -> Json:
        if secret_id not in self.documents:
            raise SecretNotFoundError(f"Secret {secret_id} does not exist")
        return self.documents[secret_id]

    async def delete(self, conn: FakeConnection, secret_id: uuid.UUID) -> None:
        conn.on_commit.append(lambda: self.documents.pop(secret_id, None))


@dataclass
class FakePrincipalSecrets:
    """The service-principal secret hashes (`catalog_es.store.principal_secrets`): client id -> (version, hash).

    Its three functions stand in for the module's (a test patches them into `commands.service_principals`).
    """

    hashes: dict[uuid.UUID, tuple[int, str]] = field(default_factory=dict)

    async def put_hash(self, conn: FakeConnection, client_id: uuid.UUID, key_version: int, secret_hash: str) -> None:
        conn.on_commit.append(lambda: self.hashes.__setitem__(client_id, (key_version, secret_hash)))

    async def current_hash(self, conn: Any, client_id: uuid.UUID) -> tuple[int, str] | None:
        return self.hashes.get(client_id)

    async def delete_hash(self, conn: FakeConnection, client_id: uuid.UUID) -> None:
        conn.on_commit.append(lambda: self.hashes.pop(client_id, None))


def fake_context(
    state: FakeCatalogState | None = None,
    access: FakeAccessState | None = None,
    *,
    soft_deletes: FakeSoftDeleteState | None = None,
    file_roots: FileStorageRoots | None = None,
    warehouse_hold_seconds: int = 0,
    secrets: FakeSecretStore | None = None,
) -> tuple[CommandContext, FakeStore]:
    """A command context over the fakes (stream versions as the rows say), and the store to assert on."""
    catalog = state or FakeCatalogState()

    def given() -> dict[str, int]:
        versions = {f"{row.kind}-{row.id}": row.version for row in catalog.tabulars}
        versions |= {f"namespace-{row.id}": row.version for row in catalog.namespaces}
        versions |= {f"warehouse-{row.id}": row.version for row in catalog.warehouses}
        versions |= {f"project-{row.id}": row.version for row in catalog.projects}
        if soft_deletes is not None:
            versions |= {f"{row.kind}-{row.id}": row.version for row in soft_deletes.tabulars}
            versions |= {f"namespace-{row.id}": row.version for row in soft_deletes.namespaces}
            versions |= {f"warehouse-{row.id}": row.version for row in soft_deletes.warehouses}
        return versions

    protections = FakeProtectionState(catalog=catalog)
    store = FakeStore(projectors=[protections.apply], given=given)
    ctx = CommandContext(
        store=store,  # type: ignore[arg-type]  # the store's own interface, without the database
        state=catalog,
        clock=SystemClock(),
        ids=_Ids(),
        access=access or FakeAccessState(),
        protections=protections,
        soft_deletes=soft_deletes,
        file_roots=file_roots or FileStorageRoots(),
        warehouse_hold_seconds=warehouse_hold_seconds,
        secrets=secrets,  # type: ignore[arg-type]  # the secret store's interface, without the database
    )
    return ctx, store


class _Ids:
    def __init__(self) -> None:
        self._next = 100

    def new_id(self) -> uuid.UUID:
        self._next += 1
        return uuid.UUID(int=self._next)


def namespace_row(*parts: str, number: int, warehouse: WarehouseRow = WAREHOUSE, version: int = 1) -> NamespaceRow:
    """A live namespace of `warehouse` with id `UUID(int=number)`."""
    location = f"{warehouse.location}/{'/'.join(parts)}"
    return NamespaceRow(uuid.UUID(int=number), warehouse.id, list(parts), {"location": location}, version)


def tabular_row(kind: TabularKindName, namespace: NamespaceRow, name: str, number: int, version: int = 1) -> TabularRow:
    """A live table or view named `name` in `namespace`, with id `UUID(int=number)`."""
    location = f"{namespace.properties['location']}/{name}"
    return TabularRow(
        id=uuid.UUID(int=number),
        warehouse_id=namespace.warehouse_id,
        namespace_id=namespace.id,
        namespace=namespace.parts,
        name=name,
        location=location,
        metadata_location=f"{location}/metadata/00000.metadata.json",
        metadata={},
        version=version,
        kind=kind,
    )


def deleted_row(
    row: TabularRow, *, with_namespace: uuid.UUID | None = None, task: uuid.UUID | None = None
) -> DeletedTabularRow:
    """`row` soft-dropped now (by `tester`), expiring in a day, with its expiration task `task`."""
    now = datetime.now(UTC)
    return DeletedTabularRow(
        id=row.id,
        kind=row.kind,
        warehouse_id=row.warehouse_id,
        namespace_id=row.namespace_id,
        namespace=row.namespace,
        name=row.name,
        location=row.location,
        metadata_location=row.metadata_location,
        metadata=row.metadata,
        version=row.version,
        deleted_at=now,
        expires_at=now + timedelta(days=1),
        purge_requested=False,
        actor="tester",
        with_namespace=with_namespace,
        expiration_task_id=task,
    )


def file_warehouse(root: Path, name: str = "lake", number: int = 1, **changes: Any) -> WarehouseRow:
    """A warehouse on `file` storage in directory `root/name` (created), id `UUID(int=number)`."""
    (root / name).mkdir(exist_ok=True)
    location = f"file://{root}/{name}"
    row = WarehouseRow(
        uuid.UUID(int=number), WAREHOUSE.project_id, name, location, {"type": "file", "location": location}
    )
    return msgspec.structs.replace(row, **changes)


def created_row(
    event: TableCreated | ViewCreated | TableRegistered | ViewRegistered, namespace: NamespaceRow
) -> TabularRow:
    """The row the catalog projection makes of a table's or view's first event (version 1)."""
    return TabularRow(
        id=event.entity_id,
        warehouse_id=event.warehouse_id,
        namespace_id=namespace.id,
        namespace=namespace.parts,
        name=event.name,
        location=event.metadata["location"],
        metadata_location=event.metadata_location,
        metadata=event.metadata,
        version=1,
        kind=kind_of(event).name,
    )


# A one-column schema and a first SQL version for the view handlers' tests (views in namespace `db`).
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
VERSION = {
    "version-id": 1,
    "schema-id": 0,
    "timestamp-ms": 1_700_000_000_000,
    "summary": {},
    "representations": [{"type": "sql", "sql": "SELECT 1", "dialect": "spark"}],
    "default-namespace": ["db"],
}
