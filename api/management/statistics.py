"""Lakekeeper's `GET /management/v1/warehouse/{id}/statistics?page_token=&page_size=`: table and view counts per hour,
newest first."""

from __future__ import annotations

import base64
import binascii
import uuid
from datetime import datetime, timedelta
from typing import Annotated

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.params import FromPath, QueryParameter

from api.auth.rules import requires
from api.management.rules import on_warehouse
from catalog_es.errors import BadRequestError
from catalog_es.store.database import Connection
from projections.statistics import warehouse_statistics

MAX_PAGE = 1000
HOUR = timedelta(hours=1)


class WarehouseStatistics(msgspec.Struct, rename="kebab", frozen=True):
    timestamp: datetime  # the end of the hour the counts stand for: they are valid until then (Lakekeeper's)
    number_of_tables: int
    number_of_views: int
    updated_at: datetime


class WarehouseStatisticsResponse(msgspec.Struct, rename="kebab"):
    warehouse_ident: uuid.UUID
    stats: list[WarehouseStatistics]
    next_page_token: str | None = None


def _token(hour: datetime) -> str:
    return base64.urlsafe_b64encode(hour.isoformat().encode()).decode()


def _before(token: str | None) -> datetime | None:
    """Raises: BadRequestError for a token this route did not hand out."""
    if not token:
        return None
    try:
        return datetime.fromisoformat(base64.urlsafe_b64decode(token.encode()).decode())
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise BadRequestError("Invalid page-token") from None


@get("/warehouse/{warehouse_id:uuid}/statistics", opt=requires(on_warehouse("describe")))
async def get_warehouse_statistics(
    conn: NamedDependency[Connection],
    warehouse_id: FromPath[uuid.UUID],
    page_token: Annotated[str | None, QueryParameter(max_length=200)] = None,
    page_size: Annotated[int, QueryParameter(ge=1, le=MAX_PAGE)] = 100,
) -> WarehouseStatisticsResponse:
    """Counts over the whole warehouse, so reading them needs describe on all of it.

    From the `catalog_statistics` process projection: a change a moment ago may not be counted yet.

    Raises:
        BadRequestError: a page token this route did not hand out.
    """
    rows = await warehouse_statistics(conn, warehouse_id, _before(page_token), page_size + 1)
    page = rows[:page_size]
    return WarehouseStatisticsResponse(
        warehouse_ident=warehouse_id,
        stats=[WarehouseStatistics(row.hour + HOUR, row.tables, row.views, row.updated_at) for row in page],
        next_page_token=_token(page[-1].hour) if len(rows) > page_size else None,
    )
