"""POST /catalog/v1/{prefix}/events: the Iceberg REST Events endpoint, served from the event log."""

from __future__ import annotations

from litestar import post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.exceptions import HTTPException
from litestar.params import JSONBody

from api.auth.authorizer import Authorizer
from api.auth.rules import requires
from api.catalog.events_wire import QueryEventsRequest, QueryEventsResponse, decode_token, encode_token
from api.catalog.rules import on_warehouse
from api.container import services
from api.dependencies import RequestScope
from api.idempotency import NOT_IDEMPOTENT
from api.settings import EventsApiSettings
from catalog_es.errors import BadRequestError
from catalog_es.store.database import Connection
from projections.audit.iceberg_events import EventQuery, first_position_after, read_iceberg_events
from projections.audit.iceberg_operations import iceberg_event
from projections.permissions import queries as permissions_queries


def _page_size(requested: int | None, settings: EventsApiSettings) -> int:
    """Above the maximum a page is cut (the draft lets servers return fewer); below 1 is a client error."""
    if requested is None:
        return min(settings.default_page_size, settings.max_page_size)
    if requested < 1:
        raise BadRequestError(f"page-size must be at least 1, got {requested}")
    return min(requested, settings.max_page_size)


def _after(token: str | None, settings: EventsApiSettings) -> int:
    """Raises: HTTPException 410 for a token below the retention horizon."""
    if token is None:
        return settings.retained_from_position
    position = decode_token(token)
    if position < settings.retained_from_position:
        raise HTTPException(
            status_code=410,
            detail=f"Events up to position {settings.retained_from_position} are no longer kept: start afresh",
        )
    return position


# A query: an Idempotency-Key must not replay a stale page, so the route stays out of that middleware.
@post("/{prefix:str}/events", status_code=200, opt={**requires(on_warehouse("read_events")), NOT_IDEMPOTENT: True})
async def query_events(
    req: NamedDependency[RequestScope],
    data: JSONBody[QueryEventsRequest],
    conn: NamedDependency[Connection],
    state: State,
) -> QueryEventsResponse:
    """The warehouse's events in log order that match every given filter and concern objects the caller may
    describe (the guard required `read_events` on the warehouse). The continuation token is the position up
    to which the log was examined: the next page starts right after it, whatever matched.

    Raises: BadRequestError (400) for a malformed filter or token, HTTPException (410) below the horizon.
    """
    settings = req.settings.events_api
    if data.custom_filters:
        raise BadRequestError(f"Unsupported custom-filters {sorted(data.custom_filters)}: this server has none")
    page_size = _page_size(data.page_size, settings)
    after, since = _after(data.continuation_token, settings), data.since()
    if since is not None and data.continuation_token is None:
        after = max(after, await first_position_after(conn, since))
    authz: Authorizer = services(state).authorizer
    principal, warehouse_id = req.principal, req.warehouse.id
    principals = None
    if authz.enabled and not await authz.sees_everything_in(conn, principal, warehouse_id):
        principals = await permissions_queries.user_principals(conn, principal.user_id, principal.roles)
    query = EventQuery(
        warehouse_id=warehouse_id,
        after=after,
        page_size=page_size,
        scan_limit=max(settings.scan_limit, page_size),
        since=since,
        types=data.event_types(),
        object_kinds=list(data.object_types) if data.object_types is not None else None,
        object_ids=data.object_ids(),
        names=data.names(),
        principals=principals,
    )
    found = await read_iceberg_events(conn, query)
    if after > found.head:
        raise BadRequestError("Invalid continuation-token: it points past the end of the log")
    return QueryEventsResponse(encode_token(found.last_position), [iceberg_event(event) for event in found.events])
