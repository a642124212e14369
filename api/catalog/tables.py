"""Table routes: list, create (and stage), load, exists, commit, drop, rename, register, metrics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, Response, delete, get, head, post
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, HeaderParameter, JSONBody, QueryParameter

from api.auth.authorizer import Authorizer
from api.auth.principal import request_principal
from api.auth.rules import requires
from api.bare_routes import bare
from api.catalog.commit_table import COMMIT_TABLE, commit_table
from api.catalog.credentials import (
    DelegationHeader,
    VendingTarget,
    credentials_path,
    delegated,
    vending_backend,
)
from api.catalog.etags import etag_header
from api.catalog.listing import list_names
from api.catalog.load_table import LOAD_TABLE, LoadQuery, load_table
from api.catalog.paging import PageRequest
from api.catalog.rules import (
    committed_table,
    forcing,
    metrics_warehouse,
    on_namespace,
    on_tabular,
    registered_table,
    renamed,
    transaction_tables,
)
from api.catalog.sign_config import table_config
from api.catalog.wire import (
    CommitTableRequest,
    CommitTableResponse,
    CommitTransactionRequest,
    CreateTableRequest,
    ListTablesResponse,
    LoadTableDocument,
    LoadTableResult,
    RegisterTableRequest,
    RenameTableRequest,
)
from api.container import services
from api.dependencies import RequestScope, parse_namespace
from api.encoded_slash import decode_name
from api.idempotency import NOT_IDEMPOTENT
from catalog_es.errors import BadRequestError, NoSuchTableError
from catalog_es.identifiers import Namespace
from catalog_es.planning.mode import table_mode, warehouse_mode
from catalog_es.state import TabularRow, WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.metrics_reports import record_metrics_report
from catalog_es.tabular_kind import TABLE
from commands.commit_transaction import CommitTransaction, TableChange, handle_commit_transaction
from commands.create_table import CreateTable, handle_create_table
from commands.tabular_lifecycle import (
    DropTable,
    RegisterTable,
    RenameTable,
    handle_drop_table,
    handle_register_table,
    handle_rename_table,
)
from projections.catalog.queries import CatalogReadModel


async def _load(
    conn: Connection, read_model: CatalogReadModel, warehouse: WarehouseRow, namespace: str, table: str
) -> TabularRow:
    ident = parse_namespace(namespace)
    row = await read_model.table(conn, warehouse.id, ident, decode_name(table))
    if row is None:
        raise NoSuchTableError(f"Table does not exist: {ident}.{table}")
    return row


def created_planning_config(req: RequestScope, metadata: Mapping[str, Any]) -> dict[str, str]:
    """`planning_config` of a table just created or registered (its metadata as a mapping), said as loadTable
    would say it."""
    inherited = warehouse_mode(req.settings.scan_planning.mode, req.warehouse.scan_planning)
    mode = table_mode(inherited, metadata.get("properties") or {})
    return {"scan-planning-mode": mode} if "server" in (mode, inherited) else {}


class TablesController(Controller):
    path = "/{prefix:str}/namespaces/{namespace:str}"

    @get("/tables", opt=requires(on_namespace(None)))
    async def list_tables(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        conn: NamedDependency[Connection],
        page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
        page_size: Annotated[int | None, QueryParameter(name="pageSize")] = None,
    ) -> ListTablesResponse:
        page = PageRequest.parse(page_token, page_size)
        return await list_names(
            conn,
            req.read_model,
            req.warehouse,
            namespace,
            page,
            req.read_model.list_tables,
            req.access,
            "tables",
        )

    @post("/tables", status_code=200, opt=requires(on_namespace("create")))
    async def create_table(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        data: JSONBody[CreateTableRequest],
        request: Request[Any, Any, Any],
        delegation: DelegationHeader = None,
    ) -> Response[LoadTableResult]:
        command = CreateTable(
            warehouse_id=req.warehouse.id,
            namespace=parse_namespace(namespace),
            name=data.name,
            schema=data.schema,
            metadata=req.meta,
            location=data.location,
            partition_spec=data.partition_spec,
            write_order=data.write_order,
            properties=data.properties,
            stage_create=data.stage_create,
        )
        result = await handle_create_table(command, req.ctx)
        # The creator (create on the namespace) writes the new table's first files: read-write.
        location, refresh = str(result.metadata["location"]), credentials_path(request, data.name)
        profile = await vending_backend(req, delegation)
        target = None if profile is None else VendingTarget(profile, location, "read-write")
        access = await delegated(req, request, target, refresh)
        config = await table_config(request, req, access.config, command.namespace, data.name)
        loaded = LoadTableResult(
            metadata=result.metadata,
            metadata_location=result.metadata_location,
            config={**config, **created_planning_config(req, result.metadata)},
            storage_credentials=access.storage_credentials,
        )
        return Response(loaded, headers=etag_header(result.metadata_location))

    @get("/tables/{table:str}", opt={**requires(on_tabular("describe", TABLE)), **bare(LOAD_TABLE)})
    async def load_table(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        table: FromPath[str],
        request: Request[Any, Any, Any],
        snapshots: FromQuery[Literal["all", "refs"]] = "all",
        if_none_match: Annotated[str | None, HeaderParameter(name="If-None-Match")] = None,
        delegation: DelegationHeader = None,
    ) -> Response[LoadTableDocument | None]:
        """Most requests are answered bare (`LOAD_TABLE`, api/catalog/load_table.py) by the same `load_table`."""
        loaded = await load_table(req, request, LoadQuery(namespace, table, snapshots, if_none_match, delegation))
        if loaded.result is None:
            return Response(None, status_code=304, headers={"ETag": loaded.tag})
        return Response(loaded.result, headers={"ETag": loaded.tag})

    @head("/tables/{table:str}", status_code=204, opt=requires(on_tabular("describe", TABLE)))
    async def table_exists(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        table: FromPath[str],
        conn: NamedDependency[Connection],
    ) -> None:
        await _load(conn, req.read_model, req.warehouse, namespace, table)

    @post("/tables/{table:str}", status_code=200, opt={**requires(committed_table), **bare(COMMIT_TABLE)})
    async def commit_table(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        table: FromPath[str],
        data: JSONBody[CommitTableRequest],
    ) -> Response[CommitTableResponse]:
        """Most requests are answered bare (`COMMIT_TABLE`, api/catalog/commit_table.py) by the same `commit_table`;
        those with an Idempotency-Key, and bodies `data` refuses, come here."""
        committed = await commit_table(req, namespace, table, data)
        return Response(committed, headers=etag_header(committed.metadata_location))

    @delete("/tables/{table:str}", status_code=204, opt=requires(forcing(on_tabular("modify", TABLE))))
    async def drop_table(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        table: FromPath[str],
        purge_requested: Annotated[bool | None, QueryParameter(name="purgeRequested")] = None,
        force: FromQuery[bool] = False,
    ) -> None:
        """Without `purgeRequested` the warehouse's delete profile decides (`purge-by-default`, else false).

        A protected table answers 409 unless `force=true` (Lakekeeper's parameter; see `forcing`).
        """
        namespace_, name = parse_namespace(namespace), decode_name(table)
        command = DropTable(req.warehouse.id, namespace_, name, purge_requested, req.meta, force=force)
        await handle_drop_table(command, req.ctx)

    @post("/tables/{table:str}/metrics", status_code=204, opt={**requires(metrics_warehouse), NOT_IDEMPOTENT: True})
    async def report_metrics(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        table: FromPath[str],
        request: Request[Any, Any, Any],
        conn: NamedDependency[Connection],
    ) -> None:
        """Keep the report (ScanReport, CommitReport or any other JSON object) in the bounded metrics table.

        A report on a table that does not exist is accepted and dropped, as Lakekeeper does: Spark reports
        on a staged table before its `assert-create` commit. So is one on a table the caller may not
        describe, so that a hidden table answers exactly like a missing one.
        """
        raw = await request.body()
        try:
            report = msgspec.json.decode(raw, type=dict[str, Any])
        except msgspec.DecodeError as exc:
            raise BadRequestError(f"A metrics report must be a JSON object: {exc}") from None
        row = await req.read_model.table(conn, req.warehouse.id, parse_namespace(namespace), decode_name(table))
        if row is None:
            return
        authz: Authorizer = services(request.app.state).authorizer
        if await authz.allowed(conn, request_principal(request.scope), row.id, "describe"):
            await record_metrics_report(conn, row.warehouse_id, row.id, report, raw)

    @post("/register", status_code=200, opt=requires(registered_table))
    async def register_table(
        self,
        req: NamedDependency[RequestScope],
        namespace: FromPath[str],
        data: JSONBody[RegisterTableRequest],
        request: Request[Any, Any, Any],
        delegation: DelegationHeader = None,
    ) -> LoadTableResult:
        command = RegisterTable(
            req.warehouse.id,
            parse_namespace(namespace),
            data.name,
            data.metadata_location,
            data.overwrite,
            req.meta,
        )
        result = await handle_register_table(command, req.ctx)
        location, refresh = str(result.metadata["location"]), credentials_path(request, data.name)
        profile = await vending_backend(req, delegation)
        target = None if profile is None else VendingTarget(profile, location, "read-write")
        access = await delegated(req, request, target, refresh)
        config = await table_config(request, req, access.config, command.namespace, data.name)
        return LoadTableResult(
            metadata=result.metadata,
            metadata_location=result.metadata_location,
            config={**config, **created_planning_config(req, result.metadata)},
            storage_credentials=access.storage_credentials,
        )


@post("/{prefix:str}/tables/rename", status_code=204, opt=requires(renamed(TABLE)))
async def rename_table(req: NamedDependency[RequestScope], data: JSONBody[RenameTableRequest]) -> None:
    command = RenameTable(
        warehouse_id=req.warehouse.id,
        source_namespace=Namespace(tuple(data.source.namespace)),
        source_name=data.source.name,
        destination_namespace=Namespace(tuple(data.destination.namespace)),
        destination_name=data.destination.name,
        metadata=req.meta,
    )
    await handle_rename_table(command, req.ctx)


@post("/{prefix:str}/transactions/commit", status_code=204, opt=requires(transaction_tables))
async def commit_transaction(req: NamedDependency[RequestScope], data: JSONBody[CommitTransactionRequest]) -> None:
    changes = []
    for change in data.table_changes:
        if change.identifier is None:
            raise BadRequestError("Every table change in a transaction must name its table")
        namespace = Namespace(tuple(change.identifier.namespace))
        changes.append(TableChange(namespace, change.identifier.name, change.requirements, change.updates))
    await handle_commit_transaction(CommitTransaction(req.warehouse.id, changes, req.meta), req.ctx)
