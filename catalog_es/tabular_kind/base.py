"""The kind of a tabular: what a table and a view each answer (see the package docstring)."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from typing import ClassVar

import msgspec

from catalog_es.errors import AlreadyExistsError, BadRequestError, CatalogError
from catalog_es.events import Event, Json
from catalog_es.identifiers import Namespace, validate_name
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
