"""Errors of identity and access management a client is meant to see."""

from catalog_es.errors import CatalogError, ForbiddenError


class NoSuchUserError(CatalogError):
    """The user is not known (never provisioned, or deleted)."""


class NoSuchRoleError(CatalogError):
    """No role by that id (or it is not visible to the caller)."""


class NotAuthorizedError(ForbiddenError):
    """The caller may see the object but not do this to it."""
