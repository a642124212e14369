"""Audit routes: the event log as CloudEvents (filtered, paginated), one entity's history, the catalog as of T."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import FromPath, FromQuery, QueryParameter

from api.auth.rules import requires, server_operator
from api.dependencies import parse_parent
from api.management.audit_params import event_filter, parse_entity, parse_time
from catalog_es.errors import BadRequestError
from catalog_es.store.database import Connection
from projections.audit.as_of import CatalogAsOf, catalog_as_of
from projections.audit.history import HistoryEntry, entity_history, read_event_page
from projections.cloudevents import StructuredCloudEvent, to_cloudevent


class EventsPage(msgspec.Struct, rename="kebab"):
    events: list[StructuredCloudEvent]
    next_page_token: str | None = None


class EntityHistory(msgspec.Struct, rename="kebab"):
    entity: str
    changes: list[HistoryEntry]


def _cursor(page_token: str | None) -> int:
    """The page token is the position of the previous page's last event."""
    if not page_token:
        return 0
    if not page_token.isdigit():
        raise BadRequestError(f"Invalid pageToken {page_token!r}")
    return int(page_token)


class AuditController(Controller):
    path = "/"

    @get("/events", opt=requires(server_operator))
    async def list_events(
        self,
        conn: NamedDependency[Connection],
        warehouse: FromQuery[str | None] = None,
        namespace: FromQuery[str | None] = None,
        table: FromQuery[str | None] = None,
        view: FromQuery[str | None] = None,
        event_type: Annotated[list[str] | None, QueryParameter(name="type")] = None,
        actor: FromQuery[str | None] = None,
        since: FromQuery[str | None] = None,
        until: FromQuery[str | None] = None,
        page_token: Annotated[str | None, QueryParameter(name="pageToken")] = None,
        page_size: Annotated[int, QueryParameter(name="pageSize", ge=1, le=1000)] = 100,
    ) -> EventsPage:
        """Events in log order; `namespace` is an id or the parts joined by 0x1F (as `parent` in the catalog API)."""
        where = event_filter(
            warehouse=warehouse,
            namespace=list(parse_parent(namespace).parts) if namespace else None,
            table=table,
            view=view,
            types=event_type,
            actor=actor,
            since=since,
            until=until,
        )
        page = await read_event_page(conn, where, after=_cursor(page_token), limit=page_size)
        token = str(page.next_after) if page.next_after is not None else None
        return EventsPage(events=[to_cloudevent(event) for event in page.events], next_page_token=token)

    @get("/events/history/{entity:str}", opt=requires(server_operator))
    async def history(self, entity: FromPath[str], conn: NamedDependency[Connection]) -> EntityHistory:
        """Every change of one entity (`table-<uuid>`, `view-<uuid>`, `namespace-<uuid>` …), summarised."""
        stream = parse_entity(entity)
        return EntityHistory(entity=stream, changes=await entity_history(conn, stream))

    @get("/as-of", opt=requires(server_operator))
    async def as_of(self, conn: NamedDependency[Connection], time: FromQuery[str]) -> CatalogAsOf:
        """Namespaces, tables and views as they were at `time` (ISO-8601), rebuilt from the log alone."""
        return await catalog_as_of(conn, parse_time(time))
