"""Adopt another catalog's namespaces, tables and views into a warehouse, files untouched (CLI and task).

The source is any catalog pyiceberg loads (REST, SQL, Glue, Hive, DynamoDB …). What it holds is read first
(`read_source`), then compared with the warehouse (`plan`): only what is new or changed becomes a command, so
a re-run after success changes nothing and a re-run after a crash goes on where it stopped (each object is one
transaction of its own). Before anything is written every table's location and metadata file must lie in the
warehouse (`uncovered`): the command lists exactly those that do not, instead of failing half way. Every
event it records carries the CloudEvents extension `importedfrom` naming the source and the object.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import msgspec
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchNamespaceError

from catalog_es.errors import BadRequestError
from catalog_es.identifiers import Namespace
from catalog_es.locations import require_inside_warehouse
from catalog_es.state import WarehouseRow
from catalog_es.store.eventstore import EventMetadata
from catalog_es.tabular_kind import kind_named
from commands.context import CommandContext
from commands.namespaces import (
    CreateNamespace,
    UpdateNamespaceProperties,
    handle_create_namespace,
    handle_update_namespace_properties,
)
from commands.permissions import ChangeAssignments, handle_change_assignments
from commands.tabular_lifecycle import RegisterTable, RegisterView, handle_register_table, handle_register_view
from projections.permissions import queries as permissions_queries

Parts = tuple[str, ...]
ActionKind = Literal[
    "create-namespace", "update-namespace", "register-table", "update-table", "register-view", "view-conflict"
]


class SourceNamespace(msgspec.Struct, frozen=True):
    parts: Parts
    properties: dict[str, str]


class SourceTabular(msgspec.Struct, frozen=True):
    kind: Literal["table", "view"]
    namespace: Parts
    name: str
    metadata_location: str
    location: str | None = None  # tables: the table's own location (claimed in the warehouse)


class Source(msgspec.Struct):
    label: str
    namespaces: list[SourceNamespace]
    tabulars: list[SourceTabular]
    views_readable: bool = True  # false: the source's pyiceberg catalog cannot list views (SQL, Glue)
    grants: list[dict[str, Any]] = []  # a manifest's grants (`export-catalog`), applied where the user exists


class Action(msgspec.Struct, frozen=True):
    kind: ActionKind
    namespace: Parts
    name: str | None = None
    metadata_location: str | None = None
    properties: dict[str, str] = {}

    @property
    def target(self) -> str:
        dotted = ".".join(self.namespace)
        return f"{dotted}.{self.name}" if self.name else dotted


def source_label(properties: dict[str, str], name: str | None = None) -> str:
    """How events name the source: `<type>:<uri>` without user info, query or fragment (never a credential)."""
    if name:
        return name
    kind = properties.get("type", "rest")
    uri = properties.get("uri", "").split("?", 1)[0].split("#", 1)[0]
    parts = urlsplit(uri)
    if parts.username or parts.password:
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        uri = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return f"{kind}:{uri}" if uri else kind


def _walk(catalog: Catalog, parent: Parts) -> Iterable[Parts]:
    try:
        children = catalog.list_namespaces(parent)
    except NoSuchNamespaceError:
        return
    for child in children:
        parts = tuple(child)
        if not parts or parts == parent or parts[: len(parent)] != parent:
            continue
        yield parts
        yield from _walk(catalog, parts)


def read_source(catalog: Catalog, label: str, only: Sequence[Parts] = ()) -> Source:
    """Everything to import: `only` namespaces (with what lies below them), else all."""
    seen: dict[Parts, None] = {}
    roots = [tuple(part) for part in only] if only else [()]
    for root in roots:
        if root:
            seen[root] = None
        for parts in _walk(catalog, root):
            seen[parts] = None
    namespaces, tabulars, views_readable = [], [], True
    for parts in seen:
        properties = {str(k): str(v) for k, v in catalog.load_namespace_properties(parts).items()}
        namespaces.append(SourceNamespace(parts=parts, properties=properties))
        for identifier in catalog.list_tables(parts):
            table = catalog.load_table(identifier)
            tabulars.append(
                SourceTabular(
                    kind="table",
                    namespace=parts,
                    name=str(identifier[-1]),
                    metadata_location=str(table.metadata_location),
                    location=table.metadata.location,
                )
            )
        try:
            views = catalog.list_views(parts)
        except NotImplementedError:
            views_readable = False
            continue
        for identifier in views:
            location = _view_metadata_location(catalog, identifier)
            tabulars.append(
                SourceTabular(kind="view", namespace=parts, name=str(identifier[-1]), metadata_location=location)
            )
    return Source(label=label, namespaces=namespaces, tabulars=tabulars, views_readable=views_readable)


def _view_metadata_location(catalog: Catalog, identifier: Sequence[str]) -> str:
    """pyiceberg's `View` drops the REST answer's `metadata-location`: read it from the same request."""
    session: Any = getattr(catalog, "_session", None)
    url: Any = getattr(catalog, "url", None)
    if session is None or url is None:
        raise BadRequestError(f"Cannot read the metadata location of view {'.'.join(identifier)} from this catalog")
    namespace = "\x1f".join(identifier[:-1])
    response = session.get(url("namespaces/{namespace}/views/{view}", namespace=namespace, view=identifier[-1]))
    response.raise_for_status()
    return str(response.json()["metadata-location"])


def uncovered(source: Source, warehouse: WarehouseRow) -> list[str]:
    """Every table location and metadata file the warehouse does not cover (sorted, each once)."""
    missing: set[str] = set()
    for tabular in source.tabulars:
        for location in (tabular.location, tabular.metadata_location):
            if location is None:
                continue
            try:
                require_inside_warehouse(location, warehouse.location, warehouse.alternative_schemes)
            except BadRequestError:
                missing.add(location)
    return sorted(missing)


async def plan(ctx: CommandContext, warehouse_id: uuid.UUID, source: Source) -> list[Action]:
    """What differs between the source and the warehouse, parents before children, namespaces before tabulars."""
    actions: list[Action] = []
    async with ctx.store.connection() as conn:
        for namespace in sorted(source.namespaces, key=lambda ns: len(ns.parts)):
            row = await ctx.state.namespace(conn, warehouse_id, Namespace(namespace.parts))
            if row is None:
                actions.append(Action("create-namespace", namespace.parts, properties=namespace.properties))
                continue
            changed = {k: v for k, v in namespace.properties.items() if row.properties.get(k) != v}
            if changed:
                actions.append(Action("update-namespace", namespace.parts, properties=changed))
        for tabular in source.tabulars:
            existing = await kind_named(tabular.kind).row(
                ctx.state, conn, warehouse_id, Namespace(tabular.namespace), tabular.name
            )
            if existing is not None and existing.metadata_location == tabular.metadata_location:
                continue
            kind: ActionKind
            if tabular.kind == "table":
                kind = "register-table" if existing is None else "update-table"
            else:
                kind = "register-view" if existing is None else "view-conflict"
            actions.append(Action(kind, tabular.namespace, tabular.name, tabular.metadata_location))
    return actions


async def apply(
    ctx: CommandContext,
    warehouse_id: uuid.UUID,
    source_label_: str,
    actions: Sequence[Action],
    *,
    actor: str,
    done: Callable[[Action], None] = lambda _: None,
) -> None:
    """Carry out the actions in order, one transaction each (a crash leaves a prefix done: re-run to resume)."""
    for action in actions:
        metadata = EventMetadata(actor=actor, imported_from=f"{source_label_}#{action.target}")
        namespace = Namespace(action.namespace)
        if action.kind == "create-namespace":
            await handle_create_namespace(CreateNamespace(warehouse_id, namespace, action.properties, metadata), ctx)
        elif action.kind == "update-namespace":
            command = UpdateNamespaceProperties(warehouse_id, namespace, action.properties, [], metadata)
            await handle_update_namespace_properties(command, ctx)
        elif action.kind in ("register-table", "update-table"):
            assert action.name is not None
            assert action.metadata_location is not None
            overwrite = action.kind == "update-table"
            register = RegisterTable(
                warehouse_id, namespace, action.name, action.metadata_location, overwrite, metadata
            )
            await handle_register_table(register, ctx)
        elif action.kind == "register-view":
            assert action.name is not None
            assert action.metadata_location is not None
            await handle_register_view(
                RegisterView(warehouse_id, namespace, action.name, action.metadata_location, metadata), ctx
            )
        # "view-conflict": a view of that name with other metadata; views have no overwrite: left to a person
        done(action)


_MANIFEST_KINDS: tuple[tuple[Literal["table", "view"], str], ...] = (("table", "tables"), ("view", "views"))


def source_from_manifest(document: dict[str, Any], label: str | None = None) -> Source:
    """What `export-catalog` wrote, as a source (raises BadRequestError for another kind of file)."""
    if document.get("format") != "catalog-es-manifest" or document.get("version") != 1:
        raise BadRequestError("Not a catalog-es manifest (format catalog-es-manifest, version 1)")
    tabulars = [
        SourceTabular(
            kind=kind,
            namespace=tuple(entry["namespace"]),
            name=str(entry["name"]),
            metadata_location=str(entry["metadata-location"]),
            location=entry.get("location"),
        )
        for kind, key in _MANIFEST_KINDS
        for entry in document.get(key, [])
    ]
    return Source(
        label=label or f"manifest:{document.get('source', 'unknown')}",
        namespaces=[
            SourceNamespace(parts=tuple(entry["namespace"]), properties=dict(entry.get("properties", {})))
            for entry in document.get("namespaces", [])
        ],
        tabulars=tabulars,
        grants=list(document.get("grants", [])),
    )


async def apply_grants(ctx: CommandContext, warehouse_id: uuid.UUID, source: Source, *, actor: str) -> tuple[int, int]:
    """A manifest's grants to users that exist here, on the imported objects: (recorded, skipped).

    Roles are skipped (their ids are the source catalog's); re-applying is a no-op (no event for a held grant).
    """
    recorded = skipped = 0
    for grant in source.grants:
        principal, privilege = str(grant["principal"]), str(grant["privilege"])
        object_id = await _object_id(ctx, warehouse_id, grant)
        async with ctx.store.connection() as conn:
            user = principal.startswith("user:") and await permissions_queries.user(conn, principal[5:]) is not None
        if object_id is None or not user:
            skipped += 1
            continue
        metadata = EventMetadata(actor=actor, imported_from=f"{source.label}#grant")
        command = ChangeAssignments(grant["kind"], object_id, [(principal, privilege)], [], metadata)
        recorded += await handle_change_assignments(command, ctx)
    return recorded, skipped


async def _object_id(ctx: CommandContext, warehouse_id: uuid.UUID, grant: dict[str, Any]) -> uuid.UUID | None:
    kind = grant.get("kind")
    if kind == "warehouse":
        return warehouse_id
    namespace = Namespace(tuple(grant.get("namespace", ())))
    async with ctx.store.connection() as conn:
        if kind == "namespace":
            row = await ctx.state.namespace(conn, warehouse_id, namespace)
            return row.id if row else None
        try:
            tabular_kind = kind_named(str(kind))
        except KeyError:
            return None  # a grant on a kind of object this catalog does not import
        tabular = await tabular_kind.row(ctx.state, conn, warehouse_id, namespace, str(grant.get("name")))
        return tabular.id if tabular else None


def only_below(source: Source, only: Sequence[Parts]) -> Source:
    """The part of a source at or below the `only` namespaces (all of it when none is named)."""
    if not only:
        return source

    def kept(parts: Sequence[str]) -> bool:
        return any(tuple(parts[: len(root)]) == tuple(root) for root in only)

    return Source(
        label=source.label,
        namespaces=[ns for ns in source.namespaces if kept(ns.parts)],
        tabulars=[t for t in source.tabulars if kept(t.namespace)],
        views_readable=source.views_readable,
        grants=[g for g in source.grants if g.get("kind") != "warehouse" and kept(g.get("namespace", ()))],
    )
