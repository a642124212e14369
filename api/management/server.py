"""POST /management/v1/bootstrap and GET /management/v1/info."""

from __future__ import annotations

from importlib.metadata import version

from litestar import get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import JSONBody

from api.auth.rules import anyone, requires
from api.container import services
from api.dependencies import RequestScope
from api.management.wire import BootstrapRequest, ServerInfo
from api.settings import Settings
from catalog_es.identifiers import NIL_PROJECT_ID
from catalog_es.store.database import Connection
from commands.bootstrap import Bootstrap, handle_bootstrap, is_bootstrapped


@post("/bootstrap", status_code=204, opt=requires(anyone))
async def bootstrap(req: NamedDependency[RequestScope], data: JSONBody[BootstrapRequest], state: State) -> None:
    """Once per server, and never once /info says bootstrapped.

    Raises: AlreadyBootstrappedError (409), BadRequestError (terms not accepted).
    """
    command = Bootstrap(
        accept_terms_of_use=data.accept_terms_of_use,
        is_operator=data.is_operator,
        user_name=data.user_name,
        user_email=data.user_email,
        user_type=data.user_type,
        metadata=req.meta,
        allow_all=services(state).settings.authz.backend == "allowall",
    )
    await handle_bootstrap(command, req.ctx)


@get("/info", opt=requires(anyone))
async def server_info(
    req: NamedDependency[RequestScope], conn: NamedDependency[Connection], state: State
) -> ServerInfo:
    """`bootstrapped` by the same rule that refuses a bootstrap call (`is_bootstrapped`).

    Lakekeeper's scripts bootstrap only while this says false. Under allow-all the server id stays unset, so
    a later switch to the builtin authorizer reads false again and can still name its first admin.
    """
    settings: Settings = services(state).settings
    server_id = await req.read_model.server_id(conn)
    bootstrapped = is_bootstrapped(
        server_id,
        allow_all=settings.authz.backend == "allowall",
        default_project_exists=await req.read_model.project_exists(conn, NIL_PROJECT_ID),
    )
    return ServerInfo(
        version=version("catalog-es"),
        bootstrapped=bootstrapped,
        server_id=server_id,
        default_project_id=NIL_PROJECT_ID if settings.enable_default_project else None,
        authz_backend=settings.authz.backend,
    )
