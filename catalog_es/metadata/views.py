"""Pure Iceberg view-metadata decisions: a new view, and view requirements and updates applied to one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, assert_never

import pydantic
from pyiceberg.schema import Schema
from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

from catalog_es.errors import BadRequestError, CommitFailedError, IllegalArgumentError
from catalog_es.events import Json
from catalog_es.locations import as_written
from catalog_es.metadata.pyiceberg_compat import metadata_version
from catalog_es.metadata.view_updates import (
    AddSchema,
    AddViewVersion,
    AssignUUID,
    RemoveProperties,
    SetCurrentViewVersion,
    SetLocation,
    SetProperties,
    UpgradeFormatVersion,
    ViewUpdate,
    parse_view_changes,
)

# View spec §"View Metadata": format version 1 is the only one.
FORMAT_VERSION = 1
# View spec §"Metadata Properties" / Java ViewProperties: how many versions a view keeps, and whether a
# replace may lose a SQL dialect of the version it replaces.
VERSION_HISTORY_SIZE = "version.history.num-entries"
DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
WRITE_METADATA_PATH = "write.metadata.path"  # Java ViewProperties.WRITE_METADATA_LOCATION
_VERSION_HISTORY_SIZE_DEFAULT = 10
# REST spec: a schema id or view-version id of -1 means "the one added earlier in this commit".
_LAST_ADDED = -1


def _model(model: type[pydantic.BaseModel], value: Any, what: str) -> Any:
    try:
        return model.model_validate(value)
    except pydantic.ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BadRequestError(f"Invalid {what} at {where}: {first['msg']}") from None


def _schema(value: Json) -> Schema:
    schema: Schema = _model(Schema, value, "view schema")
    return schema


def _version(value: Json, now_ms: int) -> ViewVersion:
    # pyiceberg would stamp a missing timestamp with its own clock; the injected one is used instead.
    version: ViewVersion = _model(ViewVersion, {"timestamp-ms": now_ms, **value}, "view version")
    return version


def _dialects(version: ViewVersion) -> set[str]:
    return {representation.root.dialect.lower() for representation in version.representations}


def _same_version(one: ViewVersion, two: ViewVersion) -> bool:
    """Equal but for id and timestamp (Java `sameViewVersion`): such a version is reused, not added."""
    return (
        one.summary == two.summary
        and one.representations == two.representations
        and one.default_catalog == two.default_catalog
        and tuple(one.default_namespace) == tuple(two.default_namespace)
        and one.schema_id == two.schema_id
    )


@dataclass
class _Builder:
    """The working copy while updates are applied, after the Iceberg Java `ViewMetadata.Builder`."""

    view_uuid: str
    format_version: int
    location: str
    schemas: list[Schema]
    versions: list[ViewVersion]
    current_version_id: int | None
    history: list[ViewHistoryEntry]
    properties: dict[str, str]
    now_ms: int
    previous_version: ViewVersion | None = None
    last_added_schema_id: int | None = None
    last_added_version_id: int | None = None
    added_version_ids: set[int] = field(default_factory=set)
    history_entry: ViewHistoryEntry | None = None

    @classmethod
    def of(cls, base: ViewMetadata, now_ms: int) -> _Builder:
        return cls(
            view_uuid=base.view_uuid,
            format_version=base.format_version,
            location=base.location,
            schemas=list(base.schemas),
            versions=list(base.versions),
            current_version_id=base.current_version_id,
            history=list(base.version_log),
            properties=dict(base.properties),
            now_ms=now_ms,
            previous_version=_current_version(base),
        )

    def apply(self, update: ViewUpdate) -> None:
        match update:
            case AssignUUID(uuid=new_uuid):
                self.assign_uuid(new_uuid)
            case UpgradeFormatVersion(format_version=version):
                self.upgrade_format_version(version)
            case AddSchema(schema=schema):
                self.add_schema(_schema(schema))
            case SetLocation(location=location):
                self.location = location
            case SetProperties(updates=updates):
                self.properties.update(updates)
            case RemoveProperties(removals=removals):
                for key in removals:
                    self.properties.pop(key, None)
            case AddViewVersion(view_version=version):
                self.add_version(_version(version, self.now_ms))
            case SetCurrentViewVersion(view_version_id=version_id):
                self.set_current_version(version_id)
            case _:
                assert_never(update)

    def assign_uuid(self, new_uuid: str) -> None:
        if new_uuid.lower() != self.view_uuid.lower():
            raise IllegalArgumentError("Cannot reassign a view's uuid")

    def upgrade_format_version(self, version: int) -> None:
        """Format version 1 is the only one, so this can only confirm it."""
        if version < self.format_version:
            raise IllegalArgumentError(f"Cannot downgrade v{self.format_version} view to v{version}")
        if version > FORMAT_VERSION:
            raise BadRequestError(f"Unsupported view format version: {version}")

    def add_schema(self, schema: Schema) -> int:
        """An equal schema (ids aside) is reused; a new one gets the highest id + 1."""
        existing = next((known for known in self.schemas if known == schema), None)
        if existing is not None:
            schema_id = existing.schema_id
        else:
            schema_id = max((known.schema_id for known in self.schemas), default=-1) + 1
            self.schemas.append(
                Schema(*schema.fields, schema_id=schema_id, identifier_field_ids=schema.identifier_field_ids)
            )
        self.last_added_schema_id = schema_id
        return schema_id

    def add_version(self, version: ViewVersion) -> int:
        """Add a version (or reuse an equal one); returns its id, the highest id + 1 when new."""
        if version.schema_id == _LAST_ADDED:
            if self.last_added_schema_id is None:
                raise IllegalArgumentError("Cannot set last added schema: no schema has been added")
            version = version.model_copy(update={"schema_id": self.last_added_schema_id})
        if all(schema.schema_id != version.schema_id for schema in self.schemas):
            raise IllegalArgumentError(f"Cannot add version with unknown schema: {version.schema_id}")
        dialects = [representation.root.dialect.lower() for representation in version.representations]
        duplicated = sorted({dialect for dialect in dialects if dialects.count(dialect) > 1})
        if duplicated:
            raise IllegalArgumentError(f"Invalid view version: Cannot add multiple queries for dialect {duplicated[0]}")
        existing = next((known for known in self.versions if _same_version(known, version)), None)
        if existing is not None:
            self.last_added_version_id = existing.version_id
            return existing.version_id
        version_id = max(version.version_id, max((known.version_id for known in self.versions), default=0) + 1)
        self.versions.append(version.model_copy(update={"version_id": version_id}))
        self.added_version_ids.add(version_id)
        self.last_added_version_id = version_id
        return version_id

    def set_current_version(self, version_id: int) -> None:
        if version_id == _LAST_ADDED:
            if self.last_added_version_id is None:
                raise IllegalArgumentError("Cannot set last added view version: no view version has been added")
            version_id = self.last_added_version_id
        if version_id == self.current_version_id:
            return
        version = next((known for known in self.versions if known.version_id == version_id), None)
        if version is None:
            raise IllegalArgumentError(f"Cannot set current version to unknown version: {version_id}")
        self.current_version_id = version_id
        # A version added by this commit is logged at its own timestamp; a re-activated one at "now".
        timestamp = version.timestamp_ms if version_id in self.added_version_ids else self.now_ms
        self.history_entry = ViewHistoryEntry.model_validate({"timestamp-ms": timestamp, "version-id": version_id})

    def build(self) -> ViewMetadata:
        """Raises: BadRequestError when the result is not a valid view."""
        current = next((known for known in self.versions if known.version_id == self.current_version_id), None)
        if current is None:
            raise BadRequestError("Invalid view: no current version")
        history = [*self.history, self.history_entry] if self.history_entry else self.history
        if self.previous_version is not None and self.properties.get(DROP_DIALECT_ALLOWED, "").lower() != "true":
            lost = _dialects(self.previous_version) - _dialects(current)
            if lost:
                raise BadRequestError(
                    f"Cannot replace view due to loss of view dialects ({DROP_DIALECT_ALLOWED}=false): {sorted(lost)}"
                )
        versions, history = _expire(self.versions, history, current, self._history_size(current.version_id))
        return ViewMetadata.model_validate(
            {
                "view-uuid": self.view_uuid,
                "format-version": FORMAT_VERSION,
                "location": self.location,
                "schemas": self.schemas,
                "current-version-id": current.version_id,
                "versions": versions,
                "version-log": history,
                "properties": self.properties,
            }
        )

    def _history_size(self, current_version_id: int) -> int:
        """Versions to keep: the property, but never fewer than this commit added plus the current one."""
        raw = self.properties.get(VERSION_HISTORY_SIZE, str(_VERSION_HISTORY_SIZE_DEFAULT))
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if size < 1:
            raise BadRequestError(f"{VERSION_HISTORY_SIZE} must be a positive integer, not {raw!r}")
        return max(size, len(self.added_version_ids | {current_version_id}))


def _expire(
    versions: list[ViewVersion], history: list[ViewHistoryEntry], current: ViewVersion, keep: int
) -> tuple[list[ViewVersion], list[ViewHistoryEntry]]:
    """Keep the current version and the newest others up to `keep`; history only after the last gap."""
    if len(versions) <= keep:
        return versions, history
    newest = sorted((v for v in versions if v.version_id != current.version_id), key=lambda v: -v.version_id)
    retained_ids = {current.version_id, *(v.version_id for v in newest[: keep - 1])}
    retained_history: list[ViewHistoryEntry] = []
    for entry in history:
        if entry.version_id in retained_ids:
            retained_history.append(entry)
        else:
            retained_history.clear()  # history before a forgotten version is dropped too
    return [v for v in versions if v.version_id in retained_ids], retained_history


def _current_version(metadata: ViewMetadata) -> ViewVersion | None:
    return next((v for v in metadata.versions if v.version_id == metadata.current_version_id), None)


def view_metadata_to_json(metadata: ViewMetadata) -> Json:
    """The metadata as written to the metadata file."""
    document: Json = metadata.model_dump(mode="json")
    return document


def parse_view_metadata(document: Json) -> ViewMetadata:
    """Raises: BadRequestError when the document is not valid view metadata."""
    metadata: ViewMetadata = _model(ViewMetadata, document, "view metadata")
    current = _current_version(metadata)
    if current is None:
        raise BadRequestError(f"Invalid view metadata: no version {metadata.current_version_id}")
    schema_ids = {schema.schema_id for schema in metadata.schemas}
    if any(version.schema_id not in schema_ids for version in metadata.versions):
        raise BadRequestError("Invalid view metadata: a version refers to an unknown schema")
    return metadata


def new_view_metadata(
    *,
    view_uuid: uuid.UUID,
    location: str,
    schema: Json,
    view_version: Json,
    properties: dict[str, str],
    now_ms: int,
) -> ViewMetadata:
    """First metadata of a new view: the schema gets id 0 and the version id 1 (REST `CreateViewRequest`).

    Raises:
        BadRequestError: the schema or version is not valid.
    """
    builder = _Builder(
        view_uuid=str(view_uuid),
        format_version=FORMAT_VERSION,
        location=location,
        schemas=[],
        versions=[],
        current_version_id=None,
        history=[],
        properties=dict(properties),
        now_ms=now_ms,
    )
    schema_id = builder.add_schema(_schema(schema))
    version = _version({**view_version, "version-id": 1, "schema-id": schema_id}, now_ms)
    builder.set_current_version(builder.add_version(version))
    return builder.build()


def commit_view(base: ViewMetadata, requirements: list[Json], updates: list[Json], *, now_ms: int) -> ViewMetadata:
    """Validate the requirements against `base`, then apply the updates in order.

    Raises:
        CommitFailedError: a requirement does not hold (spec: 409, the client refreshes and retries).
        BadRequestError: an update is unknown, malformed, or cannot be applied.
    """
    parsed_requirements, parsed_updates = parse_view_changes(requirements, updates)
    for requirement in parsed_requirements:
        if requirement.uuid.lower() != base.view_uuid.lower():
            raise CommitFailedError(
                f"Requirement failed: view UUID does not match: expected {base.view_uuid} != {requirement.uuid}"
            )
    builder = _Builder.of(base, now_ms)
    for update in parsed_updates:
        builder.apply(update)
    return builder.build()


def next_view_metadata_location(metadata: ViewMetadata, previous_location: str | None, file_id: uuid.UUID) -> str:
    """`<metadata path>/<version>-<file id>.metadata.json`, numbered after the previous file.

    The metadata path is the view's `write.metadata.path` when set (as for tables, and as Iceberg
    Java's view operations do), else `<location>/metadata`; spelled as the client spelled them.
    """
    version = metadata_version(previous_location) + 1 if previous_location else 0
    metadata_path = metadata.properties.get(WRITE_METADATA_PATH) or f"{as_written(metadata.location)}/metadata"
    return f"{as_written(metadata_path)}/{version:05d}-{file_id}.metadata.json"
