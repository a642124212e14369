"""What command handlers read before deciding: read-model rows and the two ports that serve them."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

import msgspec

from catalog_es.errors import WarehouseInactiveError
from catalog_es.events import Json, SecretReference
from catalog_es.identifiers import Namespace
from catalog_es.metadata.rebase import RebaseMode
from catalog_es.planning.mode import ScanPlanningMode
from catalog_es.store.database import Connection


class ProjectRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    name: str
    version: int = 1


class WarehouseRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    project_id: uuid.UUID
    name: str
    location: str
    storage_profile: Json
    status: str = "active"
    delete_profile: Json = {}
    credential_id: uuid.UUID | None = None
    credential_fingerprint: str | None = None
    version: int = 1
    # The warehouse's own server-side rebase mode (issue 19); None: the server's setting is in force.
    server_side_rebase: RebaseMode | None = None
    # The warehouse's own scan-planning mode (issue 33); None: the server's setting is in force.
    scan_planning: ScanPlanningMode | None = None

    @property
    def alternative_schemes(self) -> tuple[str, ...]:
        """`s3a`/`s3n` when the S3 profile says `allow-alternative-protocols` (Lakekeeper's switch), else none."""
        profile = self.storage_profile
        allowed = profile.get("type") == "s3" and profile.get("allow-alternative-protocols") is True
        return ("s3a", "s3n") if allowed else ()

    @property
    def storage_credential(self) -> SecretReference | None:
        if self.credential_id is None or self.credential_fingerprint is None:
            return None
        return SecretReference(self.credential_id, self.credential_fingerprint)


class WarehouseContents(msgspec.Struct, frozen=True):
    """What a forced warehouse deletion drops, as (id, stream version): tabulars, then namespaces deepest first."""

    tables: list[tuple[uuid.UUID, int]]
    views: list[tuple[uuid.UUID, int]]
    namespaces: list[tuple[uuid.UUID, int]]

    @property
    def empty(self) -> bool:
        return not (self.tables or self.views or self.namespaces)


class NamespaceRow(msgspec.Struct, frozen=True):
    id: uuid.UUID
    warehouse_id: uuid.UUID
    parts: list[str]
    properties: dict[str, str]
    version: int

    @property
    def namespace(self) -> Namespace:
        return Namespace(tuple(self.parts))


ClaimConflict = Literal["name", "id", "location"]


TabularKindName = Literal["table", "view"]


class TabularRow(msgspec.Struct, frozen=True):
    """A table or a view as its read model holds it: the two kinds share every field."""

    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    namespace: list[str]
    name: str
    location: str
    metadata_location: str
    metadata: Json
    version: int
    kind: TabularKindName


class TabularHead(msgspec.Struct, frozen=True):
    """A table's row without its metadata document, which grows with the table's history: the commit path reads
    this and takes the document from the documents it keeps by metadata location."""

    id: uuid.UUID
    warehouse_id: uuid.UUID
    namespace_id: uuid.UUID
    namespace: list[str]
    name: str
    location: str
    metadata_location: str
    version: int
    kind: TabularKindName

    def with_document(self, document: Json) -> TabularRow:
        """The whole row, `document` being the one stored at `metadata_location`."""
        return TabularRow(**msgspec.structs.asdict(self), metadata=document)


WarehouseLoader = Callable[[], Awaitable[WarehouseRow | None]]


class WarehouseLookup(Protocol):
    """Warehouse rows kept for a few seconds (`projections.catalog.warehouse_cache`), the edge's and the commands'."""

    async def get(self, warehouse_id: uuid.UUID, load: WarehouseLoader) -> WarehouseRow | None: ...


class CatalogState(Protocol):
    """Strongly consistent reads (the inline read models), on a given connection."""

    async def project_exists(self, conn: Connection, project_id: uuid.UUID) -> bool: ...

    async def project(self, conn: Connection, project_id: uuid.UUID) -> ProjectRow | None: ...

    async def server_id(self, conn: Connection) -> uuid.UUID | None:
        """The id recorded by bootstrap; None before it."""
        ...

    async def warehouses_in_project(self, conn: Connection, project_id: uuid.UUID) -> list[WarehouseRow]: ...

    async def all_warehouses(self, conn: Connection) -> list[WarehouseRow]: ...

    async def warehouse_contents(self, conn: Connection, warehouse_id: uuid.UUID) -> WarehouseContents: ...

    async def warehouse_by_name(self, conn: Connection, project_id: uuid.UUID, name: str) -> WarehouseRow | None: ...

    async def warehouse_by_id(self, conn: Connection, warehouse_id: uuid.UUID) -> WarehouseRow | None: ...

    async def namespace(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace
    ) -> NamespaceRow | None: ...

    async def namespace_is_empty(self, conn: Connection, row: NamespaceRow) -> bool: ...

    async def table(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None: ...

    async def table_head(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularHead | None:
        """`table` without the metadata document (see `TabularHead`)."""
        ...

    async def table_id_taken(self, conn: Connection, table_id: uuid.UUID) -> bool: ...

    async def table_name_taken(self, conn: Connection, namespace_id: uuid.UUID, name: str) -> bool:
        """Whether a table *or a view* holds the name: they share one name space per namespace."""
        ...

    async def view(
        self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace, name: str
    ) -> TabularRow | None: ...

    async def view_id_taken(self, conn: Connection, view_id: uuid.UUID) -> bool: ...

    async def location_taken(
        self, conn: Connection, warehouse_id: uuid.UUID, location: str, except_table: uuid.UUID | None = None
    ) -> bool: ...

    async def table_claim_conflict(
        self,
        conn: Connection,
        warehouse_id: uuid.UUID,
        namespace_id: uuid.UUID,
        name: str,
        table_id: uuid.UUID,
        location: str,
    ) -> ClaimConflict | None:
        """What stops a new table from taking this name, id and location (checked in that order), in one query."""
        ...


class AccessState(Protocol):
    """Strongly consistent reads of the permissions read model, for the access commands to load their own state."""

    async def role_by_name(self, conn: Connection, project_id: uuid.UUID, name: str) -> uuid.UUID | None:
        """The id of the role holding the name in the project (case-insensitively), if any."""
        ...

    async def assignments(self, conn: Connection, object_id: uuid.UUID) -> list[tuple[str, str]]:
        """(principal, privilege) granted directly on the object."""
        ...

    async def user_exists(self, conn: Connection, user_id: str) -> bool: ...

    async def object_kind(self, conn: Connection, object_id: uuid.UUID) -> str | None: ...


def require_active(warehouse: WarehouseRow) -> WarehouseRow:
    """Raises: WarehouseInactiveError for a deactivated warehouse."""
    if warehouse.status != "active":
        raise WarehouseInactiveError(f"Warehouse {warehouse.name!r} is inactive; activate it to use it")
    return warehouse
