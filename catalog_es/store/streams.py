"""Reads of single streams: identity and access state folded from their events (documents: `logged_documents`)."""

from __future__ import annotations

from catalog_es.events import Event, decode_event
from catalog_es.events.access import ManagedAccessSet, PrivilegeGranted, PrivilegeRevoked
from catalog_es.store.database import Connection


async def stream_events(conn: Connection, stream_id: str) -> list[Event]:
    cursor = await conn.execute(
        "SELECT type, data FROM catalog_events WHERE stream_id = %s ORDER BY stream_version", (stream_id,)
    )
    return [decode_event(str(row[0]), row[1]) for row in await cursor.fetchall()]


async def last_event(conn: Connection, stream_id: str) -> Event | None:
    cursor = await conn.execute(
        "SELECT type, data FROM catalog_events WHERE stream_id = %s ORDER BY stream_version DESC LIMIT 1",
        (stream_id,),
    )
    row = await cursor.fetchone()
    return decode_event(str(row[0]), row[1]) if row else None


class AccessList:
    """The grants on one object and whether it has managed access, as its `acl-<id>` stream says."""

    def __init__(self, events: list[Event]) -> None:
        self.grants: set[tuple[str, str]] = set()
        self.managed = False
        for event in events:
            match event:
                case PrivilegeGranted():
                    self.grants.add((event.principal, event.privilege))
                case PrivilegeRevoked():
                    self.grants.discard((event.principal, event.privilege))
                case ManagedAccessSet():
                    self.managed = event.enabled
