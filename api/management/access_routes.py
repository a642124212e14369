"""The identity and access routes of the management API, in one list for the app factory."""

from __future__ import annotations

from litestar.types import ControllerRouterHandler

from api.management.permissions import PermissionsController
from api.management.roles import RolesController
from api.management.users import UsersController, whoami

ACCESS_ROUTES: list[ControllerRouterHandler] = [UsersController, whoami, RolesController, PermissionsController]
