"""S3 remote signing: the spec 1.11 `signRequest` route and Lakekeeper's three signer paths.

Every path resolves one table (by name, by id or by the longest location match), then refuses with 403
unless the caller holds the privilege the method needs on it (GET/HEAD select, PUT/POST/DELETE modify)
and every object the request names lies in the table's location on the warehouse's bucket (for a caller
under a read policy on the table: a read of an object among its policy's files, `policy_files_location`). A missing
table, a view and a table the caller may not see all get the same 403. Only then is the request signed
with the warehouse credential, which never leaves the server.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

import msgspec
from litestar import Request, Response, post
from litestar.params import FromPath, JSONBody

from api.as_of_prefix import split_prefix
from api.auth.audited import audited, without_secrets
from api.auth.principal import request_principal
from api.auth.rules import in_handler, requires
from api.catalog.wire import Wire
from api.container import Services, services
from api.dependencies import parse_namespace
from api.encoded_slash import decode_name
from api.idempotency import NOT_IDEMPOTENT
from catalog_es.errors import BadRequestError, ForbiddenError
from catalog_es.planning.policy_files import policy_files_location
from catalog_es.state import TabularRow, WarehouseRow, require_active
from catalog_es.storage.signing import RequestSigner, Scope, SignRequest
from catalog_es.store.database import Connection
from projections.catalog.sign_lookup import table_at, table_by_id
from projections.permissions.read_policies import read_policy_for

_NOT_SIGNED: Final = "This request cannot be signed: no table the caller may {} holds these objects"
_SIGN_OPT: Final = {**requires(in_handler), NOT_IDEMPOTENT: True}


class RemoteSignRequest(Wire):
    """Spec 1.11 `RemoteSignRequest`."""

    region: str
    uri: str
    method: str
    headers: dict[str, list[str]] = msgspec.field(default_factory=dict)
    properties: dict[str, str] = msgspec.field(default_factory=dict)
    body: str | None = None
    provider: str | None = None


class RemoteSignResult(Wire):
    """Spec 1.11 `RemoteSignResult`: the URI to call and the headers to add."""

    uri: str
    headers: dict[str, list[str]]


class _Target(msgspec.Struct, frozen=True):
    """How a route names its table: a warehouse id (None: any), and a table name or id (None: by location)."""

    warehouse: str | None
    namespace: str | None = None
    table: str | None = None
    table_id: str | None = None


@post("/{prefix:str}/namespaces/{namespace:str}/tables/{table:str}/sign", status_code=200, opt=_SIGN_OPT)
async def sign_table_request(
    request: Request[Any, Any, Any],
    prefix: FromPath[str],
    namespace: FromPath[str],
    table: FromPath[str],
    data: JSONBody[RemoteSignRequest],
) -> Response[RemoteSignResult]:
    """Spec 1.11 signRequest. Raises: ForbiddenError (403) for anything that is not signed."""
    return await _sign(request, _Target(prefix, namespace=namespace, table=table), data)


@post("/aws/s3/sign", status_code=200, opt=_SIGN_OPT)
async def sign_any_request(
    request: Request[Any, Any, Any], data: JSONBody[RemoteSignRequest]
) -> Response[RemoteSignResult]:
    """Lakekeeper's global signer: the table whose location holds the URL, in any warehouse."""
    return await _sign(request, _Target(None), data)


@post("/{prefix:str}/v1/aws/s3/sign", status_code=200, opt=_SIGN_OPT)
async def sign_warehouse_request(
    request: Request[Any, Any, Any], prefix: FromPath[str], data: JSONBody[RemoteSignRequest]
) -> Response[RemoteSignResult]:
    """Lakekeeper's warehouse-scoped signer (the older `s3.signer.endpoint` form)."""
    return await _sign(request, _Target(prefix), data)


@post("/signer/{prefix:str}/tabular-id/{tabular_id:str}/v1/aws/s3/sign", status_code=200, opt=_SIGN_OPT)
async def sign_tabular_request(
    request: Request[Any, Any, Any], prefix: FromPath[str], tabular_id: FromPath[str], data: JSONBody[RemoteSignRequest]
) -> Response[RemoteSignResult]:
    """Lakekeeper's table-scoped signer; by location when the id's location does not hold the URL."""
    return await _sign(request, _Target(prefix, table_id=tabular_id), data)


async def _sign(
    request: Request[Any, Any, Any], target: _Target, data: RemoteSignRequest
) -> Response[RemoteSignResult]:
    # Recorded in the access log: every refusal, and with `audit_reads` every signature (the S3 method and URL).
    async with audited(request, method=data.method, path=without_secrets(data.uri)) as note:
        result, table_id, scope = await _signed(request, target, data)
        objects = " ".join(scope.locations)
        note.reason = f"signed {scope.operation}: {scope.privilege} on table {table_id}: {objects}"
    # Never cached by the client: Iceberg Java would reuse a signature for another Range of the same object.
    return Response(result, headers={"Cache-Control": "no-cache"})


async def _signed(
    request: Request[Any, Any, Any], target: _Target, data: RemoteSignRequest
) -> tuple[RemoteSignResult, uuid.UUID, Scope]:
    """The signed request, the table it acts on and what it touches. Raises: ForbiddenError."""
    if data.provider not in (None, "s3"):
        raise ForbiddenError(f"Only S3 requests are signed, not {data.provider!r}")
    app = services(request.app.state)
    wanted = SignRequest(data.region, data.method, data.uri, data.headers, data.body)
    async with app.ctx.store.connection() as conn:
        table, signer, scope = await _resolve(conn, app, target, wanted)
        verb = "read" if scope.privilege == "select" else "write"
        principal = request_principal(request.scope)
        if not await app.authorizer.allowed(conn, principal, table.id, scope.privilege):
            raise ForbiddenError(_NOT_SIGNED.format(verb))
        policy = None
        if app.authorizer.enabled:
            policy = await read_policy_for(conn, table.id, principal.user_id, principal.roles)
    if policy is not None:
        # Under a read policy only reads of its policy's files are signed: every file of its plans is there, and
        # nothing else (a signature reads a whole file; the table's own files hold rows and columns it may not see).
        if (
            scope.privilege != "select"
            or scope.listing
            or not signer.covers(scope, policy_files_location(table.location, policy))
        ):
            raise ForbiddenError(
                "A read policy applies to this principal on this table: only its plans' files are signed"
            )
    elif not signer.covers(scope, table.location):
        raise ForbiddenError("The request names an object outside the table's location")
    return RemoteSignResult(uri=data.uri, headers=signer.sign(wanted, scope)), table.id, scope


async def _resolve(
    conn: Connection, app: Services, target: _Target, wanted: SignRequest
) -> tuple[TabularRow, RequestSigner, Scope]:
    """The table the request acts on, its warehouse's signer, and what the request touches.

    Raises: ForbiddenError, the same for a missing table, a view, or a table in a hidden warehouse.
    """
    verb = "read" if wanted.method.upper() in ("GET", "HEAD") else "write"
    hidden, read_model = ForbiddenError(_NOT_SIGNED.format(verb)), app.read_model
    warehouse_id = _warehouse_id(target.warehouse, hidden)
    table: TabularRow | None = None
    if target.table is not None and warehouse_id is not None and target.namespace is not None:
        table = await read_model.table(conn, warehouse_id, parse_namespace(target.namespace), decode_name(target.table))
    elif target.table_id is not None and warehouse_id is not None:
        table = await table_by_id(conn, warehouse_id, _uuid(target.table_id, hidden))
    warehouse = None
    if table is not None:
        warehouse = await read_model.warehouse_by_id(conn, table.warehouse_id)
    if warehouse is None and warehouse_id is not None:
        warehouse = await read_model.warehouse_by_id(conn, warehouse_id)
    if table is None or warehouse is None:
        return await _by_location(conn, app, warehouse, warehouse_id, wanted, hidden)
    signer = await _signer(conn, app, require_active(warehouse), hidden)
    scope = signer.scope(wanted)
    if target.table_id is not None and not signer.covers(scope, table.location):
        return await _by_location(conn, app, warehouse, warehouse_id, wanted, hidden)  # Lakekeeper's
    return table, signer, scope


async def _by_location(
    conn: Connection,
    app: Services,
    warehouse: WarehouseRow | None,
    warehouse_id: uuid.UUID | None,
    wanted: SignRequest,
    hidden: ForbiddenError,
) -> tuple[TabularRow, RequestSigner, Scope]:
    if warehouse_id is not None and warehouse is None:
        raise hidden
    if warehouse is not None:
        signer = await _signer(conn, app, require_active(warehouse), hidden)
        scope = signer.scope(wanted)
        table = await table_at(conn, warehouse.id, scope.locations[0])
        if table is None:
            raise hidden
        return table, signer, scope
    for candidate in await app.read_model.all_warehouses(conn):  # the global signer: whose bucket is this?
        try:
            signer = await _signer(conn, app, candidate, hidden)
            scope = signer.scope(wanted)
        except (ForbiddenError, BadRequestError):  # not signing, another bucket, or a store it cannot reach
            continue
        table = await table_at(conn, candidate.id, scope.locations[0])
        if table is not None:
            require_active(candidate)
            return table, signer, scope
    raise hidden


async def _signer(conn: Connection, app: Services, warehouse: WarehouseRow, hidden: ForbiddenError) -> RequestSigner:
    """The warehouse's signer. Raises: the hidden error where its store does not sign (remote signing off, or no
    key to sign with)."""
    signer = (await app.ctx.storage(warehouse, conn)).backend.signer
    if signer is None:
        raise hidden
    return signer


def _warehouse_id(prefix: str | None, hidden: ForbiddenError) -> uuid.UUID | None:
    if prefix is None:
        return None
    base, position = split_prefix(prefix)
    if position is not None:
        raise ForbiddenError("A past catalog (as-of prefix) is read-only: nothing is signed there")
    return _uuid(base, hidden)


def _uuid(text: str, hidden: ForbiddenError) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise hidden from None


SIGN_ROUTES: Final = (sign_table_request, sign_any_request, sign_warehouse_request, sign_tabular_request)
