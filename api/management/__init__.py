"""The management API: one `Router` under /management/v1 (server, projects, warehouses, search, access, audit)."""

from __future__ import annotations

from litestar import Router

from api.auth.rules import preflight, server_operator
from api.management.access_log import access_log
from api.management.audit import AuditController
from api.management.deleted_tabulars import DELETED_TABULAR_ROUTES
from api.management.endpoint_statistics import get_endpoint_statistics
from api.management.imports import IMPORT_ROUTES
from api.management.maintenance import MAINTENANCE_ROUTES
from api.management.permissions import PermissionsController
from api.management.projects import PROJECT_ROUTES
from api.management.protection import ProtectionController
from api.management.read_policies import ReadPoliciesController
from api.management.release import RELEASE_ROUTES
from api.management.roles import RolesController
from api.management.search import search_warehouse
from api.management.search_tabular import search_tabular
from api.management.server import bootstrap, server_info
from api.management.service_principals import ServicePrincipalsController
from api.management.statistics import get_warehouse_statistics
from api.management.tasks import TasksController
from api.management.users import UsersController, whoami
from api.management.warehouses import WarehousesController

PATH = "/management/v1"


def management_router() -> Router:
    """Every management route; a new one is added to its module and declares its rule there."""
    return Router(
        PATH,
        route_handlers=[
            bootstrap,
            server_info,
            *PROJECT_ROUTES,
            WarehousesController,
            search_warehouse,
            *MAINTENANCE_ROUTES,
            *DELETED_TABULAR_ROUTES,
            TasksController,
            *IMPORT_ROUTES,
            search_tabular,
            get_warehouse_statistics,
            get_endpoint_statistics,
            ProtectionController,
            *RELEASE_ROUTES,
            UsersController,
            whoami,
            ServicePrincipalsController,
            RolesController,
            PermissionsController,
            ReadPoliciesController,
            AuditController,
            access_log,
        ],
        opt=preflight(server_operator),
    )
