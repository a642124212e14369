"""Vended credentials: what table responses carry for `X-Iceberg-Access-Delegation`, and loadCredentials."""

from __future__ import annotations

from typing import Annotated, Any, NamedTuple
from urllib.parse import quote

from litestar import Request, get
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter

from api.auth.audited import audited
from api.auth.principal import request_principal
from api.auth.rules import requires
from api.catalog.rules import on_tabular
from api.catalog.wire import LoadCredentialsResponse, StorageCredential
from api.container import services
from api.dependencies import RequestScope, parse_namespace
from api.encoded_slash import decode_name
from catalog_es.errors import NoSuchTableError
from catalog_es.planning.policy import ReadPolicy
from catalog_es.planning.policy_files import policy_files_location
from catalog_es.state import TabularRow
from catalog_es.storage.access_delegation import HEADER, parse_access_delegation
from catalog_es.storage.backends import StorageBackend
from catalog_es.storage.session_policy import AccessLevel
from catalog_es.store.database import Connection
from catalog_es.tabular_kind import TABLE
from projections.catalog.sign_lookup import table_by_id
from projections.permissions.read_policies import read_policy_for

DelegationHeader = Annotated[str | None, HeaderParameter(name=HEADER)]


class VendingTarget(NamedTuple):
    """What vended credentials are for: the warehouse's storage backend, the table location, the caller's level."""

    backend: StorageBackend
    location: str
    level: AccessLevel | None


class Delegated(NamedTuple):
    """A table response's `config` and `storage-credentials` (None: the field is left out)."""

    config: dict[str, str]
    storage_credentials: list[StorageCredential] | None = None


def credentials_path(request: Request[Any, Any, Any], table: str | None = None) -> str:
    """The table's loadCredentials path relative to the catalog URI (`v1/<prefix>/…/tables/<t>/credentials`),
    from the path of a request on that table (or on its namespace's `tables`/`register`, naming `table`)."""
    path = request.url.path.split("/catalog/", 1)[-1].rstrip("/")
    if table is not None:
        path = path.rsplit("/", 1)[0] + "/tables/" + quote(table, safe="")
    return f"{path}/credentials"


async def access_level(request: Request[Any, Any, Any], conn: Connection, table_id: Any) -> AccessLevel | None:
    """Read-write for a caller who may modify the table, read for one who may only select, else none."""
    authz, principal = services(request.app.state).authorizer, request_principal(request.scope)
    if await authz.allowed(conn, principal, table_id, "modify"):
        return "read-write"
    if await authz.allowed(conn, principal, table_id, "select"):
        return "read"
    return None


async def _vend_keys(
    request: Request[Any, Any, Any], principal_id: str, target: VendingTarget, refresh_path: str
) -> dict[str, str]:
    """The config keys of credentials for the target (S3 STS keys, an ADLS SAS, a GCS token) and where clients
    refresh them.

    Raises:
        StorageAccessError: the store refused, or the warehouse credential cannot vend.
    """
    assert target.level is not None  # checked by the callers
    vendor = services(request.app.state).vendor
    keys = await vendor.vend(target.backend, target.location, target.level, principal_id)
    return {**keys, "client.refresh-credentials-endpoint": refresh_path}


async def vending_backend(req: RequestScope, header: str | None) -> StorageBackend | None:
    """The warehouse's storage backend when a table response vends credentials (`X-Iceberg-Access-Delegation`
    asks for them and the store vends: S3 with `sts-enabled`, ADLS with `sas-enabled`, GCS with `sts-enabled`)."""
    modes = parse_access_delegation(header)
    if "vended-credentials" not in modes or "client-managed" in modes:
        return None
    backend = (await req.ctx.storage(req.warehouse)).backend
    return backend if backend.vends(modes) else None


async def vending_target(
    req: RequestScope,
    request: Request[Any, Any, Any],
    conn: Connection,
    row: TabularRow | None,
    backend: StorageBackend | None,
) -> VendingTarget | None:
    """What to vend for an existing table, read on the request's connection (its row, the caller's level on it;
    `vending_backend` already read the warehouse credential), so that the store's call later holds no connection.

    Under an as-of prefix the level is read at most (a past catalog is read-only), and nothing is vended for a
    table that is dropped now: its files are no longer the catalog's to hand out.
    """
    if backend is None or row is None:
        return None
    if req.as_of is not None and await table_by_id(conn, req.warehouse.id, row.id) is None:
        return None
    level = await access_level(request, conn, row.id)
    return VendingTarget(backend, row.location, "read" if level is not None and req.as_of is not None else level)


def policy_target(backend: StorageBackend | None, table_location: str, policy: ReadPolicy) -> VendingTarget | None:
    """What to vend to a principal under a read policy: read-only on its policy's files (`policy_files_location`),
    which hold only the rows and columns it may read; never the table's own files."""
    return None if backend is None else VendingTarget(backend, policy_files_location(table_location, policy), "read")


async def delegated(
    req: RequestScope, request: Request[Any, Any, Any], target: VendingTarget | None, refresh_path: str
) -> Delegated:
    """The storage `config`, with STS credentials for the target's level on its location; no target or no level
    (a caller who may describe the table but not read its data): no credentials.

    Raises:
        StorageAccessError: STS refused or could not be reached.
    """
    config = (await req.ctx.storage(req.warehouse)).client_config
    if target is None or target.level is None:
        return Delegated(config)
    keys = await _vend_keys(request, req.principal.user_id, target, refresh_path)
    return Delegated({**config, **keys}, [StorageCredential(prefix=target.location, config=keys)])


@get(
    "/{prefix:str}/namespaces/{namespace:str}/tables/{table:str}/credentials",
    opt=requires(on_tabular("select", TABLE)),
)
async def load_credentials(
    req: NamedDependency[RequestScope],
    request: Request[Any, Any, Any],
    namespace: FromPath[str],
    table: FromPath[str],
) -> LoadCredentialsResponse:
    """Spec 1.11 loadCredentials: fresh credentials for a table the caller may read (none when nothing vends).

    Raises:
        NoSuchTableError: the table does not exist (or is hidden from the caller).
        StorageAccessError: STS refused or could not be reached.
    """
    async with audited(request) as note:  # a credentials read is audited like loadTable (CATALOG_ES__AUDIT_READS)
        ident = parse_namespace(namespace)
        vending = await vending_backend(req, "vended-credentials")
        async with req.ctx.store.connection() as conn:  # released before the STS call
            row = await req.read_model.table(conn, req.warehouse.id, ident, decode_name(table))
            if row is None:
                raise NoSuchTableError(f"Table does not exist: {ident}.{table}")
            target = await vending_target(req, request, conn, row, vending)
            principal, authz = req.principal, services(request.app.state).authorizer
            policy = await read_policy_for(conn, row.id, principal.user_id, principal.roles) if authz.enabled else None
        if policy is not None and target is not None and target.level is not None:
            target = policy_target(target.backend, row.location, policy)  # its policy's files, nothing else
        if target is None or target.level is None:
            note.reason = "no credentials: STS off or no data access"
            return LoadCredentialsResponse(storage_credentials=[])
        keys = await _vend_keys(request, req.principal.user_id, target, credentials_path(request))
        note.reason = f"vended: {target.level} on table {row.id}" + (" (its read policy's files)" if policy else "")
        return LoadCredentialsResponse(storage_credentials=[StorageCredential(prefix=target.location, config=keys)])
