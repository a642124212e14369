"""Lakekeeper's `POST /management/v1/endpoint-statistics`: calls per endpoint, status and warehouse, per hour, in a
time window paged by stepping through time; only the warehouses the caller may describe."""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated

import msgspec
from litestar import post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody

from api.auth.authorizer import Authorizer
from api.auth.rules import requires
from api.container import services
from api.dependencies import RequestScope
from api.endpoint_statistics import EndpointStatistics
from api.management.rules import on_project
from catalog_es.errors import BadRequestError, NoSuchWarehouseError, NotAuthorizedError
from catalog_es.store.database import Connection
from catalog_es.store.endpoint_statistics import EndpointStatisticRow, read_counts

HOUR = timedelta(hours=1)
DEFAULT_INTERVAL = timedelta(days=1)
MAX_INTERVAL = timedelta(days=366)


class ForWarehouse(msgspec.Struct, tag_field="type", tag="warehouse-id", forbid_unknown_fields=True):
    id: uuid.UUID


class Unmapped(msgspec.Struct, tag_field="type", tag="unmapped", forbid_unknown_fields=True):
    """Calls that named no warehouse (creating one, managing users ...)."""


class AllWarehouses(msgspec.Struct, tag_field="type", tag="all", forbid_unknown_fields=True):
    """Every warehouse of the project the caller may describe, and the unmapped calls."""


class Window(msgspec.Struct, tag_field="type", tag="window", forbid_unknown_fields=True):
    end: datetime
    interval: str  # an ISO 8601 duration: `PT1H`, `P1D`


class PageToken(msgspec.Struct, tag_field="type", tag="page-token", forbid_unknown_fields=True):
    token: str


class GetEndpointStatisticsRequest(msgspec.Struct, rename="kebab", forbid_unknown_fields=True):
    warehouse: ForWarehouse | Unmapped | AllWarehouses
    status_codes: list[Annotated[int, msgspec.Meta(ge=0, le=999)]] | None = None
    range_specifier: Window | PageToken | None = None


class EndpointStatistic(msgspec.Struct, rename="kebab"):
    count: int
    http_route: str
    status_code: int
    created_at: datetime
    updated_at: datetime | None
    warehouse_id: uuid.UUID | None
    warehouse_name: str | None


class EndpointStatisticsResponse(msgspec.Struct, rename="kebab"):
    timestamps: list[datetime]  # the end of each hour (the counts are valid until then)
    called_endpoints: list[list[EndpointStatistic]]
    previous_page_token: str
    next_page_token: str


class _Page(msgspec.Struct):
    end: datetime
    seconds: float


# ISO 8601 durations in weeks, or days and a time part (years and months have no fixed length: refused).
_DURATION = re.compile(
    r"P(?:(?P<weeks>\d+)W|(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?)"
)


def _interval(text: str) -> timedelta:
    """Raises: BadRequestError for anything but a positive ISO 8601 duration of weeks, days, hours, minutes, seconds."""
    match = _DURATION.fullmatch(text)
    if match is None or text.endswith("T"):
        raise BadRequestError(f"interval is not an ISO 8601 duration of weeks, days or time: {text!r}")
    interval = timedelta(**{unit: float(value) for unit, value in match.groupdict().items() if value is not None})
    if not timedelta(0) < interval <= MAX_INTERVAL:
        raise BadRequestError("interval must be a positive duration of days, hours, minutes or seconds, up to P366D")
    return interval


def _token(end: datetime, interval: timedelta) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode(_Page(end, interval.total_seconds()))).decode()


def _window(specifier: Window | PageToken | None, now: datetime) -> tuple[datetime, timedelta]:
    """Raises: BadRequestError for a bad interval or a token this route did not hand out."""
    if specifier is None:
        return now, DEFAULT_INTERVAL
    if isinstance(specifier, Window):
        end = specifier.end if specifier.end.tzinfo else specifier.end.replace(tzinfo=UTC)
        return end, _interval(specifier.interval)
    try:
        page = msgspec.json.decode(base64.urlsafe_b64decode(specifier.token.encode()), type=_Page)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise BadRequestError("Invalid page token") from None
    if not 0 < page.seconds <= MAX_INTERVAL.total_seconds():
        raise BadRequestError("Invalid page token")
    return page.end, timedelta(seconds=page.seconds)


async def _scope(
    conn: Connection, authz: Authorizer, req: RequestScope, target: ForWarehouse | Unmapped | AllWarehouses
) -> tuple[list[uuid.UUID], bool]:
    """The warehouses whose calls the caller may see, and whether the project's unmapped calls too.

    Raises:
        NoSuchWarehouseError: the warehouse is not in the project or not visible to the caller.
        NotAuthorizedError: the unmapped calls asked for without describe on the project.
    """
    project_id = req.project_id
    project_describe = await authz.allowed(conn, req.principal, project_id, "describe")
    if isinstance(target, Unmapped):
        if not project_describe:
            raise NotAuthorizedError("The project's calls outside any warehouse need describe on the project")
        return [], True
    in_project = await req.read_model.warehouses_in_project(conn, project_id)
    if isinstance(target, ForWarehouse):
        missing = NoSuchWarehouseError(f"Warehouse {target.id} does not exist")
        if target.id not in {row.id for row in in_project}:
            raise missing
        await authz.require(conn, req.principal, target.id, "describe", missing)
        return [target.id], False
    visible = [row.id for row in in_project if await authz.allowed(conn, req.principal, row.id, "describe")]
    return visible, project_describe


def _statistic(row: EndpointStatisticRow) -> EndpointStatistic:
    return EndpointStatistic(
        count=row.count,
        http_route=row.http_route,
        status_code=row.status_code,
        created_at=row.created_at,
        updated_at=row.updated_at,
        warehouse_id=row.warehouse_id,
        warehouse_name=row.warehouse_name,
    )


@post("/endpoint-statistics", status_code=200, opt=requires(on_project(None)))
async def get_endpoint_statistics(
    req: NamedDependency[RequestScope],
    state: State,
    data: JSONBody[GetEndpointStatisticsRequest],
) -> EndpointStatisticsResponse:
    """Counts of the hours in the window (default: the last day), oldest first; the page tokens step one window
    back (`previous`) or forward (`next`). This process's own counts are added before reading; another
    replica's within its flush interval.

    Raises:
        BadRequestError: a bad interval or page token.
        NoSuchWarehouseError, NotAuthorizedError: see `_scope`.
    """
    statistics: EndpointStatistics = state.endpoint_statistics
    await statistics.flush(services(state).pool)  # its own connection, before this request takes one
    end, interval = _window(data.range_specifier, req.ctx.clock.now())
    try:
        start, previous_token, next_token = (
            end - interval,
            _token(end - interval, interval),
            _token(end + interval, interval),
        )
    except OverflowError:
        raise BadRequestError("The window reaches past the years a timestamp can hold") from None
    async with req.ctx.store.connection() as conn:
        warehouses, unmapped = await _scope(conn, req.access.authz, req, data.warehouse)
        rows = await read_counts(
            conn, req.project_id, start, end, warehouses, unmapped=unmapped, statuses=data.status_codes
        )
    hours: dict[datetime, list[EndpointStatistic]] = {}
    for row in rows:
        hours.setdefault(row.hour + HOUR, []).append(_statistic(row))
    return EndpointStatisticsResponse(
        timestamps=list(hours),
        called_endpoints=list(hours.values()),
        previous_page_token=previous_token,
        next_page_token=next_token,
    )
