"""loadTable's answer, shared by the routed handler (its documented signature) and its bare answer (the hot path)."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import msgspec
from litestar import Request
from litestar.types import Scope

from api.bare_routes import BareResponse, BareRoute, authorize
from api.catalog.credentials import (
    VendingTarget,
    credentials_path,
    delegated,
    policy_target,
    vending_backend,
    vending_target,
)
from api.catalog.etags import etag
from api.catalog.sign_config import table_config
from api.catalog.wire import LoadTableDocument
from api.container import services
from api.dependencies import RequestScope, parse_namespace, provide_scope, unconfirmed_scope
from api.encoded_slash import decode_name
from catalog_es.errors import NoSuchTableError
from catalog_es.identifiers import Namespace
from catalog_es.metadata.tables import only_referenced_snapshots
from catalog_es.planning.mode import ScanPlanningMode, document_mode, warehouse_mode
from catalog_es.planning.policy import ReadPolicy
from catalog_es.state import WarehouseRow
from catalog_es.storage.access_delegation import HEADER
from catalog_es.storage.backends import StorageBackend
from catalog_es.store.database import Connection
from catalog_es.store.read_connection import ReadConnection
from commands.tabulars import require_metadata_file
from projections.catalog.table_document_batch import TableDocumentBatch
from projections.catalog.warehouse_cache import WarehouseCache
from projections.permissions.read_policies import has_read_policy_in, read_policy_for

Snapshots = Literal["all", "refs"]


class LoadQuery(NamedTuple):
    """What a loadTable request asks: the path's namespace and table segments, `snapshots`, two headers."""

    namespace: str
    table: str
    snapshots: Snapshots = "all"
    if_none_match: str | None = None
    delegation: str | None = None


class Loaded(NamedTuple):
    """The ETag and the result; no result: the caller's `If-None-Match` names it (304)."""

    tag: str
    result: LoadTableDocument | None


class _UnconfirmedError(Exception):
    """The cached warehouse a bare answer began with was not confirmed: it is answered again the routed way."""


class WarehouseCheck:
    """Confirms the warehouse row an answer began with (`unconfirmed_scope`) by the log head its statement read;
    `confirmed` once it was, so a failure after that is the answer's own."""

    __slots__ = ("_cache", "_row", "confirmed")

    def __init__(self, cache: WarehouseCache, row: WarehouseRow) -> None:
        self._cache, self._row, self.confirmed = cache, row, False

    def confirm(self, head: int | None) -> None:
        """Raises: _UnconfirmedError (no head: a statement that reads none)."""
        if head is None or not self._cache.confirmed(self._row, head):
            raise _UnconfirmedError
        self.confirmed = True


def planning_config(server: ScanPlanningMode, warehouse: WarehouseRow, document: bytes) -> dict[str, str]:
    """`scan-planning-mode` for an unpoliced loadTable: the table's property over the warehouse's mode over the
    server's; said whenever it is `server` or differs from what /config advertised for the warehouse."""
    inherited = warehouse_mode(server, warehouse.scan_planning)
    mode = document_mode(inherited, document)
    return {"scan-planning-mode": mode} if "server" in (mode, inherited) else {}


def _missing(ident: Namespace, query: LoadQuery) -> NoSuchTableError:
    return NoSuchTableError(f"Table does not exist: {ident}.{query.table}")


def _confirmed_document(
    check: WarehouseCheck, head: int | None, found: tuple[str, bytes] | None, ident: Namespace, query: LoadQuery
) -> tuple[str, bytes]:
    """Raises: _UnconfirmedError; NoSuchTableError."""
    check.confirm(head)
    if found is None:
        raise _missing(ident, query)
    return found


async def _stored_document(
    req: RequestScope, conn: Connection, ident: Namespace, query: LoadQuery, check: WarehouseCheck | None
) -> tuple[str, bytes]:
    """The table's metadata location and stored document. Raises: NoSuchTableError; _UnconfirmedError."""
    name = decode_name(query.table)
    if check is not None:
        head, found = await req.read_model.table_document_at_head(conn, req.warehouse.id, ident, name)
        return _confirmed_document(check, head, found, ident, query)
    found = await req.read_model.table_document(conn, req.warehouse.id, ident, name)
    if found is None:
        raise _missing(ident, query)
    return found


class _Read(NamedTuple):
    """What loadTable read of the table (before storage is looked at): its document, ETag, what to vend."""

    location: str
    document: bytes
    tag: str
    target: VendingTarget | None = None
    policy: ReadPolicy | None = None


def _not_modified(query: LoadQuery, tag: str) -> bool:
    return query.if_none_match is not None and tag in (part.strip() for part in query.if_none_match.split(","))


async def _read(
    req: RequestScope,
    request: Request[Any, Any, Any],
    query: LoadQuery,
    ident: Namespace,
    profile: StorageBackend | None,
    check: WarehouseCheck | None,
) -> _Read | Loaded:
    """On one pooled connection, released before credentials are vended; `Loaded` for a 304."""
    name, row = decode_name(query.table), None
    authz, principal = services(request.app.state).authorizer, req.principal
    async with ReadConnection(req.ctx.store.pool) as conn:
        # A principal under a read policy on some table here takes the row path, to learn whether it is this one.
        policed = authz.enabled and await has_read_policy_in(conn, req.warehouse.id, principal.user_id, principal.roles)
        if query.snapshots == "all" and profile is None and not policed:  # common: the stored document as it is
            location, document = await _stored_document(req, conn, ident, query, check)
        else:
            if check is not None:
                check.confirm(None)
            row = await req.read_model.table(conn, req.warehouse.id, ident, name)
            if row is None:
                raise _missing(ident, query)
            location = row.metadata_location
            kept = row.metadata if query.snapshots == "all" else only_referenced_snapshots(row.metadata)
            document = msgspec.json.encode(kept)
        tag = etag(location, query.snapshots)
        if _not_modified(query, tag):
            return Loaded(tag, None)
        policy = None
        if policed and row is not None:
            policy = await read_policy_for(conn, row.id, principal.user_id, principal.roles)
        # Under a policy nothing grants storage access to the whole table: vended credentials reach its policy's
        # files only, and so does the signer; the principal reads what plans hand out.
        target = await vending_target(req, request, conn, row, profile)
        if policy is not None and row is not None:
            target = policy_target(profile, row.location, policy) if target and target.level else None
    return _Read(location, document, tag, target, policy)


async def _read_batched(
    batch: TableDocumentBatch, req: RequestScope, query: LoadQuery, ident: Namespace, check: WarehouseCheck
) -> _Read | Loaded:
    """`_read` of the common case with no authorizer (no policy, nothing vended, no connection needed but the
    statement's): the statement is shared with the loads asked for meanwhile."""
    head, found = await batch.table_document_at_head(req.warehouse.id, ident, decode_name(query.table))
    location, document = _confirmed_document(check, head, found, ident, query)
    tag = etag(location, query.snapshots)
    return Loaded(tag, None) if _not_modified(query, tag) else _Read(location, document, tag)


async def load_table(
    req: RequestScope, request: Request[Any, Any, Any], query: LoadQuery, check: WarehouseCheck | None = None
) -> Loaded:
    """The connection is released before credentials are vended: an STS call never holds one. `check`: the
    warehouse is confirmed by the table statement's log head before anything is decided.

    Raises: NoSuchTableError; MetadataFileNotFoundError; StorageAccessError (vending).
    """
    ident, name = parse_namespace(query.namespace), decode_name(query.table)
    profile = await vending_backend(req, query.delegation)
    built = services(request.app.state)
    batch = built.table_documents
    read: _Read | Loaded
    # A name PostgreSQL cannot hold (NUL) fails its own statement only, never the ones it would share.
    shared = profile is None and query.snapshots == "all" and not built.authorizer.enabled
    shared = shared and "\x00" not in query.namespace and "\x00" not in query.table
    if batch is not None and check is not None and shared:
        read = await _read_batched(batch, req, query, ident, check)
    else:
        read = await _read(req, request, query, ident, profile, check)
    if isinstance(read, Loaded):
        return read
    location, document, tag, target, policy = read
    if req.as_of is None:  # a past catalog is the log's record: its old metadata files may be gone by design
        await require_metadata_file(req.ctx, await req.ctx.storage(req.warehouse), location)  # no connection held
    access = await delegated(req, request, target, "" if target is None else credentials_path(request))
    config = await table_config(request, req, access.config, ident, name)
    if policy is not None:
        config = {**config, "scan-planning-mode": "server"}
    else:
        config = {**config, **planning_config(req.settings.scan_planning.mode, req.warehouse, document)}
    result = LoadTableDocument(
        metadata=msgspec.Raw(document),
        metadata_location=location,
        config=config,
        storage_credentials=access.storage_credentials,
    )
    return Loaded(tag, result)


# The bare answer takes what the routed handler's signature would parse without a doubt: no query but `snapshots`
# (with a valid value), each header at most once. Anything else goes to the handler (its validation, its 400s).
_QUERIES = {b"": "all", b"snapshots=all": "all", b"snapshots=refs": "refs"}
_IF_NONE_MATCH, _DELEGATION = b"if-none-match", HEADER.lower().encode()
_ENCODER = msgspec.json.Encoder()


def _accepts(scope: Scope) -> bool:
    if scope.get("query_string", b"") not in _QUERIES:
        return False
    names = [name for name, _ in scope["headers"] if name in (_IF_NONE_MATCH, _DELEGATION)]
    return len(names) == len(set(names))


async def _answer(request: Request[Any, Any, Any]) -> BareResponse:
    scope = request.scope
    await authorize(request)  # the route's guard, before anything is resolved (as the framework orders them)
    headers = {name: value for name, value in scope["headers"] if name in (_IF_NONE_MATCH, _DELEGATION)}
    if_none_match, delegation = headers.get(_IF_NONE_MATCH), headers.get(_DELEGATION)
    params = scope["path_params"]
    query = LoadQuery(
        str(params["namespace"]),
        str(params["table"]),
        _QUERIES[scope.get("query_string", b"")],  # type: ignore[arg-type]
        None if if_none_match is None else if_none_match.decode("latin-1"),
        None if delegation is None else delegation.decode("latin-1"),
    )
    loaded = await _load(request, query)
    tag = (b"etag", loaded.tag.encode())
    if loaded.result is None:
        return BareResponse(304, [tag])
    return BareResponse(200, [tag, (b"content-type", b"application/json")], _ENCODER.encode(loaded.result))


async def _load(request: Request[Any, Any, Any], query: LoadQuery) -> Loaded:
    """With the warehouse the cache holds, confirmed by the table statement (no wait for a look at the log); if
    it cannot be, or anything failed before it was, the routed handler's way (`provide_scope`, then the load)."""
    unconfirmed = unconfirmed_scope(request)
    if unconfirmed is not None:
        check = WarehouseCheck(services(request.app.state).warehouses, unconfirmed.warehouse)
        try:
            return await load_table(unconfirmed, request, query, check)
        except Exception:
            if check.confirmed:
                raise
    return await load_table(await provide_scope(request), request, query)


LOAD_TABLE = BareRoute(_accepts, _answer)
"""loadTable's bare answer (api/bare_routes.py)."""
