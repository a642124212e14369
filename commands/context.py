"""What every handler is given: the event store, the state ports, storage, a clock and an id source."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import msgspec

from catalog_es.clock import Clock, IdSource, millis
from catalog_es.errors import BadRequestError, NoSuchNamespaceError, NoSuchWarehouseError
from catalog_es.identifiers import Namespace
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.metadata.rebase import RebaseMode
from catalog_es.protection import ProtectionState
from catalog_es.soft_delete import SoftDeleteState
from catalog_es.state import AccessState, CatalogState, NamespaceRow, WarehouseLookup, WarehouseRow, require_active
from catalog_es.storage.file_roots import FileStorageRoots
from catalog_es.storage.files import WarehouseStorage
from catalog_es.storage.outbound import EndpointPolicy
from catalog_es.storage.profiles import StorageCredential, decode_credential, decode_profile, system_identity_of
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventStore
from catalog_es.store.secrets import SecretStore
from commands.file_presence import FilePresence

_T = TypeVar("_T")


@dataclass(frozen=True)
class CommandContext:
    store: EventStore
    state: CatalogState
    clock: Clock
    ids: IdSource
    access: AccessState  # the permissions read model, for the access commands' own reads
    protections: ProtectionState  # what may not be dropped (read in the drop's own transaction)
    secrets: SecretStore | None = None
    # The edge's warehouse cache: a command then reads the row the request resolved, without a pool checkout.
    # None (the CLI, most tests): every lookup reads the read model.
    warehouses: WarehouseLookup | None = None
    endpoints: EndpointPolicy = field(default_factory=EndpointPolicy)  # which S3 endpoints storage may contact
    # Where `file` warehouses may be created; the default (no roots) refuses them all.
    file_roots: FileStorageRoots = field(default_factory=FileStorageRoots)
    # Which tables get commits rebased on a moved branch (issue 19): see `catalog_es.metadata.rebase.rebase_enabled`.
    server_side_rebase: RebaseMode = "on"
    # Metadata documents (and parsed models) by location: a hot table's commit neither reads nor parses its document
    # (issues 19 §2, 28). The composition root shares one with the catalog projector.
    documents: MetadataDocuments = field(default_factory=MetadataDocuments, compare=False, repr=False)
    # Whether current metadata files are still in storage, one worker-thread hop per batch of requests.
    presence: FilePresence = field(default_factory=FilePresence, compare=False, repr=False)
    # The soft-deleted read model (commands/soft_delete.py); None where nothing undrops (most tests).
    soft_deletes: SoftDeleteState | None = None
    # How long a warehouse deleted with `force` can still be undeleted (commands/warehouse_hold.py); 0: not at all.
    warehouse_hold_seconds: int = 0
    # The warehouse one request's edge resolved (active), set by `for_request`: its commands read it again for free.
    resolved: WarehouseRow | None = field(default=None, compare=False, repr=False)
    _credentials: dict[uuid.UUID, StorageCredential] = field(default_factory=dict, compare=False, repr=False)
    _storages: dict[bytes, WarehouseStorage] = field(default_factory=dict, compare=False, repr=False)
    # The last row asked for and its storage: a request asks for its warehouse's several times, the same row object.
    _last_storage: tuple[WarehouseRow, WarehouseStorage] | None = field(default=None, compare=False, repr=False)

    def secret_store(self) -> SecretStore:
        if self.secrets is None:
            raise BadRequestError(
                "This server has no secrets key (CATALOG_ES__SECRETS_KEY): it cannot keep credentials"
            )
        return self.secrets

    async def credential(self, warehouse: WarehouseRow, conn: Connection | None = None) -> StorageCredential | None:
        """The warehouse's storage credential, decrypted once per secret id and then cached.

        `conn`: the caller's connection, read on instead of taking a second one while it holds the first.
        """
        reference = warehouse.storage_credential
        if reference is None:
            return None
        cached = self._credentials.get(reference.id)
        if cached is None:
            if conn is None:
                async with self.store.connection() as own:
                    document = await self.secret_store().get(own, reference.id)
            else:
                document = await self.secret_store().get(conn, reference.id)
            # A warehouse given a system identity while the operator allowed it keeps it, but uses it only while
            # the setting stays on: nothing asks a metadata service otherwise.
            self.endpoints.check_system_identity(system_identity_of(document))
            cached = decode_credential(document)
            self._credentials[reference.id] = cached
        return cached

    async def storage(self, warehouse: WarehouseRow, conn: Connection | None = None) -> WarehouseStorage:
        """IO for one warehouse, configured from its profile and credential; kept while both stay the same
        (a FileIO costs a fifth of a commit to set up). `conn`: as for `credential`."""
        last = self._last_storage
        if last is not None and last[0] is warehouse:  # the same row: the same key, whose storage is never replaced
            return last[1]
        key = msgspec.json.encode((warehouse.id, warehouse.storage_profile, warehouse.credential_fingerprint))
        storage = self._storages.get(key)
        if storage is None:
            profile, credential = decode_profile(warehouse.storage_profile), await self.credential(warehouse, conn)
            storage = WarehouseStorage(profile, credential, self.endpoints)
            self._storages[key] = storage
        object.__setattr__(self, "_last_storage", (warehouse, storage))
        return storage

    def deleted(self) -> SoftDeleteState:
        if self.soft_deletes is None:
            raise AssertionError("this command context has no soft-deleted read model")
        return self.soft_deletes

    def now_ms(self) -> int:
        return millis(self.clock.now())

    async def existing_namespace(self, conn: Connection, warehouse_id: uuid.UUID, namespace: Namespace) -> NamespaceRow:
        """Raises: NoSuchNamespaceError."""
        row = await self.state.namespace(conn, warehouse_id, namespace)
        if row is None:
            raise NoSuchNamespaceError(f"Namespace does not exist: {namespace}")
        return row

    def for_request(self, warehouse: WarehouseRow) -> CommandContext:
        """This context for one request whose edge resolved `warehouse` (active): a command on it takes that row
        instead of resolving it again (one warehouse-cache look at the log per request, not one per resolution).
        """
        # A shallow copy that shares every cache: `dataclasses.replace` runs `__init__` again, 25 times as long.
        bound = object.__new__(CommandContext)
        bound.__dict__.update(self.__dict__)
        object.__setattr__(bound, "resolved", warehouse)
        return bound

    async def warehouse(self, warehouse_id: uuid.UUID) -> WarehouseRow:
        """An active warehouse. Raises: NoSuchWarehouseError, WarehouseInactiveError."""
        if self.resolved is not None and self.resolved.id == warehouse_id:
            return self.resolved  # checked active by the edge when this request began

        async def load() -> WarehouseRow | None:
            async with self.store.connection() as conn:
                return await self.state.warehouse_by_id(conn, warehouse_id)

        row = await (load() if self.warehouses is None else self.warehouses.get(warehouse_id, load))
        if row is None:
            raise NoSuchWarehouseError(f"Warehouse {warehouse_id} does not exist")
        return require_active(row)


async def off_loop(function: Callable[..., _T], *args: object) -> _T:
    """Run blocking storage IO in a worker thread, never on the event loop."""
    return await asyncio.to_thread(function, *args)
