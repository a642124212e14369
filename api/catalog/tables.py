"""Table routes: list, create (and stage), load, exists, commit, drop, rename, register, metrics."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, Response, delete, get, head, post
from litestar.params import Parameter

from api.auth.authorizer import Authorizer
from api.auth.listing_filter import ListingAccess
from api.auth.principal import request_principal
from api.catalog.etags import etag, etag_header
from api.catalog.listing import list_names
from api.catalog.paging import PageRequest
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
from api.dependencies import CATALOG_DEPENDENCIES, parse_namespace
from api.encoded_slash import decode_name
from catalog_es.errors import BadRequestError, NoSuchTableError
from catalog_es.identifiers import Namespace
from catalog_es.metadata.tables import only_referenced_snapshots
from catalog_es.state import TableRow, WarehouseRow
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import EventMetadata
from catalog_es.store.metrics_reports import record_metrics_report
from commands.commit_table import CommitTable, handle_commit_table
from commands.commit_transaction import CommitTransaction, TableChange, handle_commit_transaction
from commands.context import CommandContext
from commands.create_table import CreateTable, handle_create_table
from commands.table_lifecycle import (
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
) -> TableRow:
    ident = parse_namespace(namespace)
    row = await read_model.table(conn, warehouse.id, ident, decode_name(table))
    if row is None:
        raise NoSuchTableError(f"Table does not exist: {ident}.{table}")
    return row


class TablesController(Controller):
    path = "/catalog/v1/{prefix:str}/namespaces/{namespace:str}"
    dependencies = CATALOG_DEPENDENCIES

    @get("/tables")
    async def list_tables(
        self,
        namespace: str,
        conn: Connection,
        read_model: CatalogReadModel,
        warehouse_row: WarehouseRow,
        access: ListingAccess,
        page_token: Annotated[str | None, Parameter(query="pageToken")] = None,
        page_size: Annotated[int | None, Parameter(query="pageSize")] = None,
    ) -> ListTablesResponse:
        page = PageRequest.parse(page_token, page_size)
        return await list_names(
            conn, read_model, warehouse_row, namespace, page, read_model.list_tables, access, "tables"
        )

    @post("/tables", status_code=200)
    async def create_table(
        self,
        namespace: str,
        data: CreateTableRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> Response[LoadTableResult]:
        command = CreateTable(
            warehouse_id=warehouse_row.id,
            namespace=parse_namespace(namespace),
            name=data.name,
            schema=data.schema,
            metadata=meta,
            location=data.location,
            partition_spec=data.partition_spec,
            write_order=data.write_order,
            properties=data.properties,
            stage_create=data.stage_create,
        )
        result = await handle_create_table(command, ctx)
        config = (await ctx.storage(warehouse_row)).client_config
        loaded = LoadTableResult(metadata=result.metadata, metadata_location=result.metadata_location, config=config)
        return Response(loaded, headers=etag_header(result.metadata_location))

    @get("/tables/{table:str}")
    async def load_table(
        self,
        namespace: str,
        table: str,
        conn: Connection,
        read_model: CatalogReadModel,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        snapshots: Literal["all", "refs"] = "all",
        if_none_match: Annotated[str | None, Parameter(header="If-None-Match")] = None,
    ) -> Response[LoadTableDocument | None]:
        ident = parse_namespace(namespace)
        if snapshots == "all":  # the common case: the stored document is sent as it is, never decoded and re-encoded
            found = await read_model.table_document(conn, warehouse_row.id, ident, decode_name(table))
            if found is None:
                raise NoSuchTableError(f"Table does not exist: {ident}.{table}")
            location, metadata = found[0], msgspec.Raw(found[1])
        else:
            row = await _load(conn, read_model, warehouse_row, namespace, table)
            location = row.metadata_location
            metadata = msgspec.Raw(msgspec.json.encode(only_referenced_snapshots(row.metadata)))
        tag = etag(location, snapshots)
        if if_none_match is not None and tag in (part.strip() for part in if_none_match.split(",")):
            return Response(None, status_code=304, headers={"ETag": tag})
        config = (await ctx.storage(warehouse_row)).client_config
        result = LoadTableDocument(metadata=metadata, metadata_location=location, config=config)
        return Response(result, headers={"ETag": tag})

    @head("/tables/{table:str}", status_code=204)
    async def table_exists(
        self, namespace: str, table: str, conn: Connection, read_model: CatalogReadModel, warehouse_row: WarehouseRow
    ) -> None:
        await _load(conn, read_model, warehouse_row, namespace, table)

    @post("/tables/{table:str}", status_code=200)
    async def commit_table(
        self,
        namespace: str,
        table: str,
        data: CommitTableRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> Response[CommitTableResponse]:
        command = CommitTable(
            warehouse_row.id, parse_namespace(namespace), decode_name(table), data.requirements, data.updates, meta
        )
        result = await handle_commit_table(command, ctx)
        assert result.metadata_location is not None  # a commit always writes a metadata file
        committed = CommitTableResponse(metadata_location=result.metadata_location, metadata=result.metadata)
        return Response(committed, headers=etag_header(result.metadata_location))

    @delete("/tables/{table:str}", status_code=204)
    async def drop_table(
        self,
        namespace: str,
        table: str,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
        purge_requested: Annotated[bool | None, Parameter(query="purgeRequested")] = None,
    ) -> None:
        """Without `purgeRequested` the warehouse's delete profile decides (`purge-by-default`, else false)."""
        command = DropTable(warehouse_row.id, parse_namespace(namespace), decode_name(table), purge_requested, meta)
        await handle_drop_table(command, ctx)

    @post("/tables/{table:str}/metrics", status_code=204)
    async def report_metrics(
        self,
        namespace: str,
        table: str,
        request: Request[Any, Any, Any],
        conn: Connection,
        read_model: CatalogReadModel,
        warehouse_row: WarehouseRow,
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
        row = await read_model.table(conn, warehouse_row.id, parse_namespace(namespace), decode_name(table))
        if row is None:
            return
        authz: Authorizer = services(request.app.state).authorizer
        if await authz.allowed(conn, request_principal(request.scope), row.id, "describe"):
            await record_metrics_report(conn, row.warehouse_id, row.id, report, raw)

    @post("/register", status_code=200)
    async def register_table(
        self,
        namespace: str,
        data: RegisterTableRequest,
        ctx: CommandContext,
        warehouse_row: WarehouseRow,
        meta: EventMetadata,
    ) -> LoadTableResult:
        command = RegisterTable(
            warehouse_row.id, parse_namespace(namespace), data.name, data.metadata_location, data.overwrite, meta
        )
        result = await handle_register_table(command, ctx)
        config = (await ctx.storage(warehouse_row)).client_config
        return LoadTableResult(metadata=result.metadata, metadata_location=result.metadata_location, config=config)


@post("/catalog/v1/{prefix:str}/tables/rename", status_code=204)
async def rename_table(
    data: RenameTableRequest, ctx: CommandContext, warehouse_row: WarehouseRow, meta: EventMetadata
) -> None:
    command = RenameTable(
        warehouse_id=warehouse_row.id,
        source_namespace=Namespace(tuple(data.source.namespace)),
        source_name=data.source.name,
        destination_namespace=Namespace(tuple(data.destination.namespace)),
        destination_name=data.destination.name,
        metadata=meta,
    )
    await handle_rename_table(command, ctx)


@post("/catalog/v1/{prefix:str}/transactions/commit", status_code=204)
async def commit_transaction(
    data: CommitTransactionRequest, ctx: CommandContext, warehouse_row: WarehouseRow, meta: EventMetadata
) -> None:
    changes = []
    for change in data.table_changes:
        if change.identifier is None:
            raise BadRequestError("Every table change in a transaction must name its table")
        namespace = Namespace(tuple(change.identifier.namespace))
        changes.append(TableChange(namespace, change.identifier.name, change.requirements, change.updates))
    await handle_commit_transaction(CommitTransaction(warehouse_row.id, changes, meta), ctx)
