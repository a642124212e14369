"""A pure summary of what one table or view change did: snapshots, schemas and their columns, properties, location."""

from __future__ import annotations

from typing import Any

import msgspec

from projections.audit.schema_changes import base_schema, column_changes

Json = dict[str, Any]

# The update actions folded into named fields; any other action is listed by name in `other`.
_SUMMARISED = {
    "add-snapshot",
    "remove-snapshots",
    "add-schema",
    "set-current-schema",
    "set-properties",
    "remove-properties",
    "set-location",
    "set-snapshot-ref",
}


class RebaseSummary(msgspec.Struct, frozen=True, kw_only=True, rename="kebab"):
    """A commit the server rebased (issue 19): the branch, the client's base and the head it was put on."""

    ref: str
    original_base_snapshot_id: int | None
    new_parent_snapshot_id: int


class ChangeSummary(msgspec.Struct, frozen=True, kw_only=True, rename="kebab", omit_defaults=True):
    """What a change did, in Iceberg terms; empty fields are left out of the JSON form."""

    snapshots_added: list[int] = []
    snapshots_removed: list[int] = []
    schemas_added: list[int] = []
    current_schema_id: int | None = None
    columns_added: list[str] = []
    columns_dropped: list[str] = []
    columns_renamed: dict[str, str] = {}
    properties_set: dict[str, str] = {}
    properties_removed: list[str] = []
    location: str | None = None
    refs_set: dict[str, int] = {}
    other: list[str] = []
    rebased: RebaseSummary | None = None

    def describe(self) -> str:
        """One line for a terminal, e.g. `+snapshot 42; schema 1 (current); set owner=bob`."""
        parts = [f"+snapshot {sid}" for sid in self.snapshots_added]
        parts += [f"-snapshot {sid}" for sid in self.snapshots_removed]
        parts += [f"+schema {sid}" for sid in self.schemas_added]
        if self.current_schema_id is not None:
            parts.append(f"current schema {self.current_schema_id}")
        parts += [f"+column {name}" for name in self.columns_added]
        parts += [f"-column {name}" for name in self.columns_dropped]
        parts += [f"column {old} renamed {new}" for old, new in self.columns_renamed.items()]
        parts += [f"ref {name}={sid}" for name, sid in self.refs_set.items()]
        parts += [f"set {key}={value}" for key, value in self.properties_set.items()]
        parts += [f"unset {key}" for key in self.properties_removed]
        if self.location is not None:
            parts.append(f"location {self.location}")
        parts += self.other
        if self.rebased is not None:
            parts.append(
                f"rebased by the server onto {self.rebased.new_parent_snapshot_id} "
                f"(client base {self.rebased.original_base_snapshot_id})"
            )
        return "; ".join(parts)


def summarize_maintenance_job(data: Json, finished: bool) -> ChangeSummary:
    """A maintenance job's start or outcome with its figures, e.g.
    `maintenance system.data-compaction succeeded: rewritten-data-files-count=200, added-data-files-count=1`."""
    head = f"maintenance {data.get('policy_type')} "
    if not finished:
        return ChangeSummary(other=[f"{head}started (attempt {data.get('attempt')})"])
    figures = ", ".join(
        f"{key}={value}" for key, value in (data.get("metrics") or {}).items() if isinstance(value, int | float)
    )
    error = f": {data['error']}" if data.get("error") else ""
    return ChangeSummary(other=[f"{head}{data.get('outcome')}{': ' + figures if figures else ''}{error}"])


def summarize_updates(
    updates: list[Json],
    metadata: Json | None = None,
    rebased: Json | None = None,
    requirements: list[Json] | None = None,
    assigned: Json | None = None,
) -> ChangeSummary:
    """Fold a commit's updates; `assigned` (the ids the catalog chose, recorded since commits record changes) or
    else `metadata` (the result) resolves `-1`, "the schema added last"; `metadata` holds the schema an added one
    is compared with (the one `requirements` assert, else the newest older one); `rebased` is the commit event's
    record of a server-side rebase."""
    added: list[int] = []
    fields: Json = {
        "snapshots_added": [],
        "snapshots_removed": [],
        "schemas_added": added,
        "properties_set": {},
        "properties_removed": [],
        "refs_set": {},
        "other": [],
        "columns_added": [],
        "columns_dropped": [],
        "columns_renamed": {},
    }
    for update in updates:
        action = update.get("action", "")
        if action == "add-snapshot":
            fields["snapshots_added"].append(int(update["snapshot"]["snapshot-id"]))
        elif action == "remove-snapshots":
            fields["snapshots_removed"].extend(int(sid) for sid in update.get("snapshot-ids", []))
        elif action == "add-schema":
            added.append(_added_schema_id(update, metadata, assigned))
            changes = column_changes(update["schema"], base_schema(metadata, requirements or [], added[-1]))
            fields["columns_added"] += changes.added
            fields["columns_dropped"] += changes.dropped
            fields["columns_renamed"].update(changes.renamed)
        elif action == "set-current-schema":
            schema_id = int(update["schema-id"])
            if schema_id == -1:
                schema_id = added[-1] if added else _current_schema_id(metadata)
            fields["current_schema_id"] = schema_id
        elif action == "set-properties":
            fields["properties_set"].update(update.get("updates", {}))
        elif action == "remove-properties":
            fields["properties_removed"].extend(update.get("removals", []))
        elif action == "set-location":
            fields["location"] = update["location"]
        elif action == "set-snapshot-ref":
            fields["refs_set"][update["ref-name"]] = int(update["snapshot-id"])
        elif action not in _SUMMARISED and action not in fields["other"]:
            fields["other"].append(action)
    if rebased:
        fields["rebased"] = RebaseSummary(
            ref=rebased["ref"],
            original_base_snapshot_id=rebased.get("original_base_snapshot_id"),
            new_parent_snapshot_id=rebased["new_parent_snapshot_id"],
        )
    return ChangeSummary(**fields)


def _added_schema_id(update: Json, metadata: Json | None, assigned: Json | None) -> int:
    """The id an `add-schema` got: the catalog's choice when recorded, else the client's, else the result's last."""
    if assigned and "schema" in assigned:
        return int(assigned["schema"])
    schema_id = update["schema"].get("schema-id")
    return int(schema_id) if schema_id is not None else _last_schema_id(metadata)


def _current_schema_id(metadata: Json | None) -> int:
    return int((metadata or {}).get("current-schema-id", -1))


def _last_schema_id(metadata: Json | None) -> int:
    schemas = (metadata or {}).get("schemas", [])
    return max((int(schema.get("schema-id", -1)) for schema in schemas), default=-1)
