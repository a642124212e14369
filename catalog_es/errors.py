"""Domain errors named after the Iceberg spec's exceptions, and the access errors; the API maps each to a status."""

from __future__ import annotations


class CatalogError(Exception):
    """Base of every error a client is meant to see."""


class BadRequestError(CatalogError):
    """The request is malformed or asks for something invalid."""


class IllegalArgumentError(BadRequestError):
    """Input the reference implementation refuses with `IllegalArgumentException` (Java clients re-raise that)."""


class InvalidLocationError(BadRequestError):
    """A location is outside its warehouse, overlaps another table, or is not empty."""


class UnprocessableEntityError(CatalogError):
    """The request is well-formed but contradicts itself (spec: 422)."""


class NoSuchWarehouseError(CatalogError):
    """No warehouse by that name or id."""


class NoSuchNamespaceError(CatalogError):
    """No namespace by that identifier."""


class NoSuchTableError(CatalogError):
    """No table by that identifier."""


class NoSuchViewError(CatalogError):
    """No view by that identifier."""


class AlreadyExistsError(CatalogError):
    """A namespace, table or view by that name (any case) exists already."""


class NamespaceNotEmptyError(CatalogError):
    """The namespace still holds tables or child namespaces."""


class CommitFailedError(CatalogError):
    """A requirement failed or a concurrent writer won the race: refresh and retry."""


class ForbiddenError(CatalogError):
    """The request is understood but not allowed in the current state."""


class WarehouseInactiveError(ForbiddenError):
    """The warehouse is deactivated: its data is kept but the catalog refuses access until it is activated."""


class NoSuchProjectError(CatalogError):
    """No project by that id."""


class NotEmptyError(CatalogError):
    """A project or warehouse still holds warehouses, namespaces or tables."""


class ProtectedError(CatalogError):
    """The object (or something inside it) is protected from being dropped; `force` by someone allowed overrides."""


class ImmutablePropertyModificationError(BadRequestError):
    """A commit changes a table property that, once set, is fixed (`encryption.key-id`)."""


class ImmutablePropertyRemovalError(BadRequestError):
    """A commit removes a table property that, once set, is fixed."""


class NamespaceDepthExceededError(BadRequestError):
    """A namespace has more levels than the catalog allows."""


class MetadataFileNotFoundError(CatalogError):
    """The table's current metadata file is gone from storage (deleted behind the catalog's back)."""


class AlreadyBootstrappedError(CatalogError):
    """Bootstrap runs once per server."""


class StorageAccessError(BadRequestError):
    """A warehouse's storage cannot be written, read or deleted with the given profile and credential."""


class NoSuchUserError(CatalogError):
    """The user is not known (never provisioned, or deleted)."""


class NoSuchServicePrincipalError(CatalogError):
    """No service principal by that client id, or it was revoked."""


class NoSuchRoleError(CatalogError):
    """No role by that id (or it is not visible to the caller)."""


class NotAuthorizedError(ForbiddenError):
    """The caller may see the object but not do this to it."""


class NoSuchPolicyError(CatalogError):
    """The object declares no policy of that type (it may inherit one: that is not its own)."""


class NoSuchTaskError(CatalogError):
    """No task by that id in the warehouse (or it is not visible to the caller)."""


class TaskFinishedError(CatalogError):
    """The task already succeeded, failed for good or was cancelled: it can no longer be changed."""


class NoSuchPlanIdError(CatalogError):
    """No scan plan by that id for this table and caller (another caller's or table's plan answers the same)."""


class NoSuchPlanTaskError(CatalogError):
    """The plan task is not one this catalog handed out for this table."""


class UnsupportedOperationError(CatalogError):
    """The request is valid but this catalog does not do it (the spec's 406)."""
