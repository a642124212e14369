"""Iceberg REST wire types (spec 1.11 names), decoded and encoded by msgspec."""

from __future__ import annotations

from typing import Any

import msgspec

from api.wire_limits import Name

Json = dict[str, Any]


class Wire(msgspec.Struct, rename="kebab", omit_defaults=True):
    """Base of the Iceberg REST wire family: kebab-case field names as in the spec."""


class CatalogConfig(Wire):
    defaults: dict[str, str]
    overrides: dict[str, str]
    endpoints: list[str]
    idempotency_key_lifetime: str | None = None


class CreateNamespaceRequest(Wire):
    namespace: list[Name]
    properties: dict[str, str] = {}


class NamespaceResponse(msgspec.Struct):
    """CreateNamespaceResponse and GetNamespaceResponse."""

    namespace: list[str]
    properties: dict[str, str]


class ListNamespacesResponse(Wire):
    namespaces: list[list[str]]
    next_page_token: str | None = None


class UpdateNamespacePropertiesRequest(Wire):
    removals: list[str] = []
    updates: dict[str, str] = {}


class UpdateNamespacePropertiesResponse(msgspec.Struct):
    updated: list[str]
    removed: list[str]
    missing: list[str]


class TableIdentifier(msgspec.Struct):
    namespace: list[Name]
    name: Name


class ListTablesResponse(Wire):
    identifiers: list[TableIdentifier]
    next_page_token: str | None = None


class CreateTableRequest(Wire):
    name: Name
    schema: Json
    location: str | None = None
    partition_spec: Json | None = None
    write_order: Json | None = None
    stage_create: bool = False
    properties: dict[str, str] = {}


class StorageCredential(Wire):
    """Spec 1.11: a credential for the objects under `prefix` (clients pick the longest matching prefix)."""

    prefix: str
    config: dict[str, str]


class LoadCredentialsResponse(Wire):
    storage_credentials: list[StorageCredential]


class LoadTableResult(Wire):
    metadata: Json
    metadata_location: str | None = None
    config: dict[str, str] = {}
    storage_credentials: list[StorageCredential] | None = None


class LoadTableDocument(Wire):
    """LoadTableResult with the metadata sent as stored (no decode and re-encode of large documents)."""

    metadata: msgspec.Raw
    metadata_location: str | None = None
    config: dict[str, str] = {}
    storage_credentials: list[StorageCredential] | None = None


class CommitTableRequest(Wire):
    updates: list[Json]
    requirements: list[Json] = []
    identifier: TableIdentifier | None = None


class CommitTableResponse(Wire):
    """The committed metadata sent as the commit encoded it for its file (no second encoding of a large document)."""

    metadata_location: str
    metadata: msgspec.Raw


class RenameTableRequest(Wire):
    source: TableIdentifier
    destination: TableIdentifier


class RegisterTableRequest(Wire):
    name: Name
    metadata_location: str
    overwrite: bool = False


class CommitTransactionRequest(Wire):
    table_changes: list[CommitTableRequest]


class CreateViewRequest(Wire):
    name: Name
    schema: Json
    view_version: Json
    properties: dict[str, str] = {}
    location: str | None = None


class LoadViewResult(Wire):
    metadata_location: str
    metadata: Json
    config: dict[str, str] = {}


class CommitViewRequest(Wire):
    updates: list[Json]
    requirements: list[Json] = []
    identifier: TableIdentifier | None = None


class RegisterViewRequest(Wire):
    name: Name
    metadata_location: str
