"""Table and view names as of a log position, read from the log, so a later rename never leaks backwards."""

from __future__ import annotations

from catalog_es.database import Connection
from catalog_es.events import NamespaceCreated
from catalog_es.eventstore import RecordedEvent
from projections.lakekeeper_events import TabularName

_KINDS = ("table", "view")
_NAMING_TYPES = [
    f"io.catalog-es.{kind}.{action}.v1" for kind in _KINDS for action in ("created", "registered", "renamed")
]
_DROPPED_TYPES = {f"io.catalog-es.{kind}.dropped.v1" for kind in _KINDS}
_LAST_NAMING_EVENT = (
    "SELECT data FROM catalog_events WHERE stream_id = %s AND type = ANY(%s) AND global_position < %s"
    " ORDER BY global_position DESC LIMIT 1"
)


class TabularNames:
    """Names as of the event being relayed. The relay shows it every event in log order (`observe`);
    a cache miss (a restart, an old table) reads the log before that position."""

    def __init__(self) -> None:
        self._tabulars: dict[str, tuple[str, str]] = {}  # stream id → (namespace id, name)
        self._namespaces: dict[str, list[str]] = {}

    async def tabular(self, conn: Connection, stream_id: str, *, before: int) -> TabularName | None:
        """The name of the table or view `stream_id` (e.g. `table-<id>`) just before position `before`."""
        if stream_id not in self._tabulars:
            cursor = await conn.execute(_LAST_NAMING_EVENT, (stream_id, _NAMING_TYPES, before))
            row = await cursor.fetchone()
            if row is None:
                return None
            self._tabulars[stream_id] = (str(row[0]["namespace_id"]), str(row[0]["name"]))
        namespace_id, name = self._tabulars[stream_id]
        return await self.named(conn, namespace_id, name, before=before)

    async def named(self, conn: Connection, namespace_id: str, name: str, *, before: int) -> TabularName | None:
        if namespace_id not in self._namespaces:
            cursor = await conn.execute(
                _LAST_NAMING_EVENT, (f"namespace-{namespace_id}", [NamespaceCreated.type_name], before)
            )
            row = await cursor.fetchone()
            if row is None:
                return None
            self._namespaces[namespace_id] = list(row[0]["namespace"])
        return TabularName(namespace=self._namespaces[namespace_id], name=name)

    def observe(self, event: RecordedEvent) -> None:
        """Move the cache past `event` (namespaces are never renamed; dropped tabulars are forgotten)."""
        data = event.data
        if event.type == NamespaceCreated.type_name:
            self._namespaces[str(data["namespace_id"])] = list(data["namespace"])
        elif event.type in _NAMING_TYPES:
            self._tabulars[event.stream_id] = (str(data["namespace_id"]), str(data["name"]))
        elif event.type in _DROPPED_TYPES:
            self._tabulars.pop(event.stream_id, None)
