"""The project a request names: the `x-project-id` header, else the default project."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.connection import ASGIConnection

from api.settings import Settings
from catalog_es.errors import BadRequestError
from catalog_es.identifiers import NIL_PROJECT_ID


def project_id_of(connection: ASGIConnection[Any, Any, Any, Any], settings: Settings) -> uuid.UUID:
    """The project named by the `x-project-id` header, else the default project (when enabled).

    Raises: BadRequestError for a malformed header or a missing one with the default project disabled.
    """
    header = connection.headers.get("x-project-id")
    if header is None:
        if not settings.enable_default_project:
            raise BadRequestError("Pass the project in the x-project-id header")
        return NIL_PROJECT_ID
    try:
        return uuid.UUID(header)
    except ValueError:
        raise BadRequestError(f"x-project-id is not a UUID: {header!r}") from None
