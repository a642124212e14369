"""The remote-signing keys a table response adds to its `config` (catalog_es.storage.remote_signing)."""

from __future__ import annotations

from typing import Any

from litestar import Request

from api.catalog.path import PATH
from api.dependencies import RequestScope
from catalog_es.identifiers import Namespace
from catalog_es.storage.access_delegation import parse_access_delegation
from catalog_es.storage.profiles import S3Profile
from catalog_es.storage.remote_signing import remote_signing_config


async def table_config(
    request: Request[Any, Any, Any], req: RequestScope, config: dict[str, str], namespace: Namespace, table: str
) -> dict[str, str]:
    """`config` with the signer's keys merged over it when the table's clients sign through the catalog.

    The signer URI is the catalog's base as this request reached it (`<scheme>://<host>/catalog`). Nothing is
    signed under an as-of prefix (a past catalog: its data is read with vended, read-only credentials).
    """
    storage = await req.ctx.storage(req.warehouse)
    if not isinstance(storage.profile, S3Profile):  # only S3 clients sign: nothing of the request to read
        return config
    modes = parse_access_delegation(request.headers.get("x-iceberg-access-delegation"))
    catalog_uri = str(request.base_url).rstrip("/") + PATH.removesuffix("/v1")
    prefix = str(request.path_params["prefix"])
    can_sign = storage.backend.signer is not None and req.as_of is None
    extra = remote_signing_config(storage.profile, modes, catalog_uri, prefix, namespace, table, can_sign)
    return {**config, **extra} if extra else config
