"""The object a request acts on, resolved once: the guard decides on it and the handler acts on that very value."""

from __future__ import annotations

import uuid
from typing import Any

from litestar.connection import ASGIConnection

from api.container import services
from api.project_header import project_id_of
from api.settings import Settings

_PROJECT = "catalog_es.target_project"


def creation_project(connection: ASGIConnection[Any, Any, Any, Any], body_project: uuid.UUID | None) -> uuid.UUID:
    """The project a warehouse is created in: the one resolved for this request already, else the body's
    `project-id` (Lakekeeper's field), else the `x-project-id` header's.

    The guard calls it first and its answer is kept in the request scope, so the handler creates the
    warehouse exactly where the guard checked `create` (once a header said B and the body said A).
    """
    state = connection.scope.setdefault("state", {})
    resolved = state.get(_PROJECT)
    if isinstance(resolved, uuid.UUID):
        return resolved
    settings: Settings = services(connection.app.state).settings
    project = body_project or project_id_of(connection, settings)
    state[_PROJECT] = project
    return project
