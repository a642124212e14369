"""commitTable's answer, shared by the routed handler (its documented signature) and its bare answer (the hot path)."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.types import Empty, Scope
from litestar.utils.scope.state import ScopeState

from api.bare_routes import BareResponse, BareRoute, authorize
from api.catalog.etags import etag
from api.catalog.wire import CommitTableRequest, CommitTableResponse
from api.dependencies import RequestScope, parse_namespace, provide_scope
from api.encoded_slash import decode_name
from api.idempotency import HEADER as IDEMPOTENCY_KEY
from commands.commit_table import CommitTable, handle_commit_table


async def commit_table(req: RequestScope, namespace: str, table: str, data: CommitTableRequest) -> CommitTableResponse:
    """Raises: what `handle_commit_table` raises."""
    command = CommitTable(
        req.warehouse.id,
        parse_namespace(namespace),
        decode_name(table),
        data.requirements,
        data.updates,
        req.meta,
    )
    result = await handle_commit_table(command, req.ctx)
    assert result.metadata_location is not None  # a commit always writes a metadata file
    encoded = result.encoded if result.encoded is not None else msgspec.json.encode(result.metadata)
    return CommitTableResponse(metadata_location=result.metadata_location, metadata=msgspec.Raw(encoded))


_ENCODER = msgspec.json.Encoder()


def _accepts(scope: Scope) -> bool:
    """Without an Idempotency-Key (or with an empty one), which the idempotency middleware passes through untouched:
    a request with a key goes through it to the routed handler (its claim, replay and record)."""
    return not dict(scope["headers"]).get(IDEMPOTENCY_KEY, b"")


async def _answer(request: Request[Any, Any, Any]) -> BareResponse | None:
    # The body the request layer decoded, converted as Litestar converts the handler's `data`; one it would refuse
    # (or none) is declined before anything is done, for the routed handler to answer with its own 400.
    document = ScopeState.from_scope(request.scope).json
    if document is Empty:
        return None
    try:
        data = msgspec.convert(document, CommitTableRequest, strict=False, str_keys=True)
    except msgspec.ValidationError:
        return None
    await authorize(request)  # the route's guard, then the request's scope (as the framework orders them)
    req = await provide_scope(request)
    params = request.scope["path_params"]
    committed = await commit_table(req, str(params["namespace"]), str(params["table"]), data)
    headers = [(b"etag", etag(committed.metadata_location).encode()), (b"content-type", b"application/json")]
    return BareResponse(200, headers, _ENCODER.encode(committed))


COMMIT_TABLE = BareRoute(_accepts, _answer)
"""commitTable's bare answer (api/bare_routes.py)."""
