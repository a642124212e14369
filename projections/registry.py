"""Every projection in one list: `projector run --all`, status, rebuild and verify iterate over it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from catalog_es.events import Event
from catalog_es.events.tasks import TASK_EVENTS
from catalog_es.metadata.document_cache import MetadataDocuments
from catalog_es.store.database import Connection
from catalog_es.store.eventstore import InlineProjector, RecordedEvent
from catalog_es.store.migrations import Migration
from catalog_es.store.task_queue import TASK_QUEUE_MIGRATIONS, TASK_TABLES
from projections.audit.log_chain import CHAIN_MIGRATIONS, CHAIN_TABLES, chain_events
from projections.catalog.document_entries import COMPARED_ENTRIES
from projections.catalog.migrations import READ_MODEL_MIGRATIONS
from projections.catalog.projector import CATALOG_TOPICS, READ_MODEL_TABLES, CatalogProjector, project_catalog
from projections.checkpoints import ProjectorStatus, projector_status
from projections.maintenance.health import (
    HEALTH_MIGRATIONS,
    HEALTH_PROJECTION,
    HEALTH_TABLES,
    HEALTH_TOPICS,
    project_health,
)
from projections.maintenance.policies import POLICY_MIGRATIONS, POLICY_TABLES, POLICY_TOPICS, project_policies
from projections.permissions.projector import (
    PERMISSION_MIGRATIONS,
    PERMISSION_TABLES,
    PERMISSION_TOPICS,
    project_permissions,
)
from projections.protection import PROTECTION_MIGRATIONS, PROTECTION_TABLES, PROTECTION_TOPICS, project_protection
from projections.search import SEARCH_MIGRATIONS, SEARCH_TABLES, SEARCH_TOPICS, project_search
from projections.statistics import STATISTICS_MIGRATIONS, STATISTICS_TABLES, project_statistics
from projections.tasks import project_tasks
from projections.topics import stored_type_names


@dataclass(frozen=True)
class Projection:
    """A read model: its tables, their SQL, and the function applying events to them.

    Inline projections run in the append transaction (read-your-writes); the others run in
    projector processes with a checkpoint. Rebuild and verify use the same `project`, which hands `apply` only the
    events of its `topics` (every event when None): a projection declares what it takes, and filters nothing itself.
    Its projector process and its rebuild read only those from the store (`types`, in SQL).
    """

    name: str
    tables: tuple[str, ...]
    migrations: tuple[Migration, ...]
    apply: InlineProjector
    topics: tuple[type[Event], ...] | None
    inline: bool = False
    rebuildable: bool = True  # False: only ever built forward (the hash chain must not be recomputed from the log)
    types: frozenset[str] | None = field(init=False, repr=False, compare=False)  # stored type names of `topics`
    # `audit verify` compares a table's rows as this query (its relation `{}`) gives them; `SELECT * FROM {}` if absent.
    compared: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        types = None if self.topics is None else stored_type_names(self.topics)
        object.__setattr__(self, "types", types)

    async def project(self, conn: Connection, events: Sequence[RecordedEvent]) -> None:
        """Apply the events of this projection's topics, in log order (a batch without any is not handed over)."""
        taken = events if self.types is None else [event for event in events if event.type in self.types]
        if taken:
            await self.apply(conn, taken)


CATALOG = Projection(
    "catalog",
    READ_MODEL_TABLES,
    READ_MODEL_MIGRATIONS,
    project_catalog,
    CATALOG_TOPICS,
    inline=True,
    compared={"table_document_entries": COMPARED_ENTRIES},
)
# Every event with a warehouse counts towards its statistics (events per hour).
STATISTICS = Projection("catalog_statistics", STATISTICS_TABLES, STATISTICS_MIGRATIONS, project_statistics, None)
SEARCH = Projection("tabular_search", SEARCH_TABLES, SEARCH_MIGRATIONS, project_search, SEARCH_TOPICS)
PERMISSIONS = Projection(
    "permissions", PERMISSION_TABLES, PERMISSION_MIGRATIONS, project_permissions, PERMISSION_TOPICS, inline=True
)
PROTECTION = Projection(
    "protection", PROTECTION_TABLES, PROTECTION_MIGRATIONS, project_protection, PROTECTION_TOPICS, inline=True
)
# The hash chain links every event.
LOG_CHAIN = Projection("log_chain", CHAIN_TABLES, CHAIN_MIGRATIONS, chain_events, None, rebuildable=False)

TASKS = Projection("tasks", TASK_TABLES, TASK_QUEUE_MIGRATIONS, project_tasks, TASK_EVENTS, inline=True)
MAINTENANCE_POLICIES = Projection(
    "maintenance_policies", POLICY_TABLES, POLICY_MIGRATIONS, project_policies, POLICY_TOPICS, inline=True
)
MAINTENANCE_HEALTH = Projection(HEALTH_PROJECTION, HEALTH_TABLES, HEALTH_MIGRATIONS, project_health, HEALTH_TOPICS)

PROJECTIONS = (
    CATALOG,
    STATISTICS,
    SEARCH,
    PERMISSIONS,
    TASKS,
    MAINTENANCE_POLICIES,
    MAINTENANCE_HEALTH,
    PROTECTION,
    LOG_CHAIN,
)
PROCESS_PROJECTIONS = tuple(p for p in PROJECTIONS if not p.inline)
# What every event store on the write path applies in its append transaction, in this order.
INLINE_PROJECTORS = tuple(p.project for p in PROJECTIONS if p.inline)


def inline_projectors(documents: MetadataDocuments) -> tuple[InlineProjector, ...]:
    """`INLINE_PROJECTORS`, the catalog's keeping metadata documents in `documents` (the composition root's)."""
    with_documents = replace(CATALOG, apply=CatalogProjector(documents))
    return tuple(with_documents.project if p is CATALOG else p.project for p in PROJECTIONS if p.inline)


def projection(name: str) -> Projection:
    """The projection called `name`.

    Raises:
        KeyError: no such projection.
    """
    for candidate in PROJECTIONS:
        if candidate.name == name:
            return candidate
    raise KeyError(f"No projection {name!r}; known: {', '.join(p.name for p in PROJECTIONS)}")


async def all_statuses(conn: Connection, now: datetime) -> list[ProjectorStatus]:
    return [await projector_status(conn, p.name, inline=p.inline, now=now) for p in PROJECTIONS]
