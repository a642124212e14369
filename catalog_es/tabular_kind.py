"""Table or view: every way the two kinds of tabular differ (events, errors, claims, read-model rows), in one place.

Tables and views share one name space per namespace and one lifecycle (create or register, rename, drop, soft
drop, undrop, expire, protect, release). Code on those paths holds a `TabularKind` and asks it, instead of
comparing a kind string (Lakekeeper's `TabularId` idea). The metadata logic that really differs (pyiceberg's
table updates against the view builder) stays in `catalog_es.metadata`.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from typing import ClassVar

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, CatalogError, NoSuchTableError, NoSuchViewError
from catalog_es.events import (
    Event,
    Json,
    TableDropped,
    TableEvent,
    TableRegistered,
    TableRenamed,
    ViewDropped,
    ViewEvent,
    ViewRegistered,
    ViewRenamed,
)
from catalog_es.events.lifecycle import (
    TableExpired,
    TableSoftDropped,
    TableUndropped,
    ViewExpired,
    ViewSoftDropped,
    ViewUndropped,
)
from catalog_es.events.protection import TableProtectionSet, ViewProtectionSet
from catalog_es.identifiers import Namespace, validate_name
from catalog_es.metadata.tables import parse_metadata
from catalog_es.metadata.views import parse_view_metadata
from catalog_es.state import CatalogState, TabularKindName, TabularRow
from catalog_es.store.database import Connection


class Adopted(msgspec.Struct, frozen=True):
    """What registering needs from a metadata file: the tabular's id and its location."""

    id: uuid.UUID
    location: str


class SoftDrop(msgspec.Struct, frozen=True, kw_only=True):
    """What a soft drop records of one tabular, whichever its kind."""

    tabular_id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    name: str
    expires_at_ms: int
    purge_requested: bool
    with_namespace: uuid.UUID | None = None
    expiration_task_id: uuid.UUID | None = None


class TabularKind(ABC):
    """One kind of tabular. Two instances exist, `TABLE` and `VIEW`; compare them with `is`."""

    name: ClassVar[TabularKindName]
    relation: ClassVar[str]  # its inline read model: `tables` or `views`
    missing_error: ClassVar[type[CatalogError]]
    claims_location: ClassVar[bool]  # its location is its own: no overlap with another's, empty when created
    purgeable: ClassVar[bool]  # a drop may delete its files (a view's metadata files always stay)

    def __repr__(self) -> str:
        return self.name.upper()

    @property
    def title(self) -> str:
        return self.name.capitalize()

    def stream_id(self, tabular_id: uuid.UUID) -> str:
        """The stream of one tabular of this kind (its events' `stream_id`)."""
        return f"{self.name}-{tabular_id}"

    def validate_name(self, name: str) -> None:
        """Raises: BadRequestError for a name no engine can address."""
        try:
            validate_name(name, self.name)
        except ValueError as exc:
            raise BadRequestError(str(exc)) from None

    def missing(self, namespace: Namespace, name: str) -> CatalogError:
        """`NoSuchTableError`/`NoSuchViewError` for a name that holds none of this kind."""
        return self.missing_error(f"{self.title} does not exist: {namespace}.{name}")

    def name_taken(self, namespace: Namespace, name: str, holder: TabularKind) -> AlreadyExistsError:
        """Creating (or registering) one of this kind under a name `holder` holds, as Iceberg's reference catalogs
        word it (Java engines and users match on it)."""
        if holder is self:
            return AlreadyExistsError(f"{self.title} already exists: {namespace}.{name}")
        return AlreadyExistsError(f"{holder.title} with same name already exists: {namespace}.{name}")

    def parse_adopted(self, document: Json, metadata_location: str) -> Adopted:
        """The id and location in a file to register. The messages never quote the file's content.

        Raises:
            BadRequestError: it is not metadata of this kind.
        """
        if not isinstance(document, dict):
            raise BadRequestError(f"{metadata_location} is not a {self.name} metadata file: not a JSON object")
        try:
            return self._adopt(document)
        except (BadRequestError, ValueError):
            raise BadRequestError(f"{metadata_location} is not a valid {self.name} metadata file") from None

    @abstractmethod
    def _adopt(self, document: Json) -> Adopted: ...

    @abstractmethod
    async def row(
        self, state: CatalogState, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        """The live one of this kind by name, from the strongly consistent read model."""

    @abstractmethod
    async def id_taken(self, state: CatalogState, conn: Connection, tabular_id: uuid.UUID) -> bool:
        """Whether a live one of this kind has this id."""

    @abstractmethod
    def registered(
        self,
        tabular_id: uuid.UUID,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        metadata_location: str,
        metadata: Json,
    ) -> Event: ...

    @abstractmethod
    def renamed(self, row: TabularRow, namespace_id: uuid.UUID, name: str) -> Event: ...

    @abstractmethod
    def dropped(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        """A drop for good (`purge` is recorded only where the kind can purge)."""

    @abstractmethod
    def soft_dropped(self, drop: SoftDrop) -> Event: ...

    @abstractmethod
    def undropped(
        self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, namespace_id: uuid.UUID, name: str, from_name: str
    ) -> Event: ...

    @abstractmethod
    def expired(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event: ...

    @abstractmethod
    def protection_set(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, protected: bool) -> Event: ...


class _Table(TabularKind):
    name = "table"
    relation = "tables"
    missing_error = NoSuchTableError
    claims_location = True
    purgeable = True

    def _adopt(self, document: Json) -> Adopted:
        metadata = parse_metadata(document)
        return Adopted(metadata.table_uuid, metadata.location)

    async def row(
        self, state: CatalogState, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return await state.table(conn, warehouse_id, namespace, name)

    async def id_taken(self, state: CatalogState, conn: Connection, tabular_id: uuid.UUID) -> bool:
        return await state.table_id_taken(conn, tabular_id)

    def registered(
        self,
        tabular_id: uuid.UUID,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        metadata_location: str,
        metadata: Json,
    ) -> Event:
        return TableRegistered(
            table_id=tabular_id,
            warehouse_id=warehouse_id,
            namespace_id=namespace_id,
            name=name,
            metadata_location=metadata_location,
            metadata=metadata,
        )

    def renamed(self, row: TabularRow, namespace_id: uuid.UUID, name: str) -> Event:
        return TableRenamed(
            table_id=row.id,
            warehouse_id=row.warehouse_id,
            from_namespace_id=row.namespace_id,
            from_name=row.name,
            namespace_id=namespace_id,
            name=name,
        )

    def dropped(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return TableDropped(table_id=tabular_id, warehouse_id=warehouse_id, purge_requested=purge)

    def soft_dropped(self, drop: SoftDrop) -> Event:
        return TableSoftDropped(
            table_id=drop.tabular_id,
            warehouse_id=drop.warehouse_id,
            namespace_id=drop.namespace_id,
            name=drop.name,
            expires_at_ms=drop.expires_at_ms,
            purge_requested=drop.purge_requested,
            with_namespace=drop.with_namespace,
            expiration_task_id=drop.expiration_task_id,
        )

    def undropped(
        self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, namespace_id: uuid.UUID, name: str, from_name: str
    ) -> Event:
        return TableUndropped(
            table_id=tabular_id, warehouse_id=warehouse_id, namespace_id=namespace_id, name=name, from_name=from_name
        )

    def expired(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return TableExpired(table_id=tabular_id, warehouse_id=warehouse_id, purge_requested=purge)

    def protection_set(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, protected: bool) -> Event:
        return TableProtectionSet(table_id=tabular_id, warehouse_id=warehouse_id, protected=protected)


class _View(TabularKind):
    name = "view"
    relation = "views"
    missing_error = NoSuchViewError
    claims_location = False
    purgeable = False

    def _adopt(self, document: Json) -> Adopted:
        metadata = parse_view_metadata(document)
        return Adopted(uuid.UUID(metadata.view_uuid), metadata.location)

    async def row(
        self, state: CatalogState, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None:
        return await state.view(conn, warehouse_id, namespace, name)

    async def id_taken(self, state: CatalogState, conn: Connection, tabular_id: uuid.UUID) -> bool:
        return await state.view_id_taken(conn, tabular_id)

    def registered(
        self,
        tabular_id: uuid.UUID,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        metadata_location: str,
        metadata: Json,
    ) -> Event:
        return ViewRegistered(
            view_id=tabular_id,
            warehouse_id=warehouse_id,
            namespace_id=namespace_id,
            name=name,
            metadata_location=metadata_location,
            metadata=metadata,
        )

    def renamed(self, row: TabularRow, namespace_id: uuid.UUID, name: str) -> Event:
        return ViewRenamed(
            view_id=row.id,
            warehouse_id=row.warehouse_id,
            from_namespace_id=row.namespace_id,
            from_name=row.name,
            namespace_id=namespace_id,
            name=name,
        )

    def dropped(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return ViewDropped(view_id=tabular_id, warehouse_id=warehouse_id)

    def soft_dropped(self, drop: SoftDrop) -> Event:
        return ViewSoftDropped(
            view_id=drop.tabular_id,
            warehouse_id=drop.warehouse_id,
            namespace_id=drop.namespace_id,
            name=drop.name,
            expires_at_ms=drop.expires_at_ms,
            with_namespace=drop.with_namespace,
            expiration_task_id=drop.expiration_task_id,
        )

    def undropped(
        self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, namespace_id: uuid.UUID, name: str, from_name: str
    ) -> Event:
        return ViewUndropped(
            view_id=tabular_id, warehouse_id=warehouse_id, namespace_id=namespace_id, name=name, from_name=from_name
        )

    def expired(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, purge: bool) -> Event:
        return ViewExpired(view_id=tabular_id, warehouse_id=warehouse_id)

    def protection_set(self, tabular_id: uuid.UUID, warehouse_id: uuid.UUID, *, protected: bool) -> Event:
        return ViewProtectionSet(view_id=tabular_id, warehouse_id=warehouse_id, protected=protected)


TABLE: TabularKind = _Table()
VIEW: TabularKind = _View()
TABULAR_KINDS: tuple[TabularKind, ...] = (TABLE, VIEW)
_BY_NAME: dict[str, TabularKind] = {kind.name: kind for kind in TABULAR_KINDS}


def kind_named(name: str) -> TabularKind:
    """The kind a row's or a request's `kind` names (`table` or `view`).

    Raises:
        KeyError: another name.
    """
    return _BY_NAME[name]


def kind_of(event: TableEvent | ViewEvent) -> TabularKind:
    """The kind whose stream an event of a table or a view belongs to."""
    return _BY_NAME[event.stream_kind]
