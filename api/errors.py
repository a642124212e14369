"""The one error policy: every failure becomes the Iceberg `{"error": {message, type, code}}` envelope."""

from __future__ import annotations

from typing import Any

import msgspec
import psycopg
import structlog
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from pyiceberg.exceptions import ValidationError as IcebergValidationError

from catalog_es import errors
from catalog_es.store.database import check_idle_connections


class ErrorModel(msgspec.Struct):
    """The spec's error object: `message`, `type` (the exception's name) and the HTTP `code`."""

    message: str
    type: str
    code: int


class IcebergErrorResponse(msgspec.Struct):
    """The spec's error envelope every API answers a failure with."""

    error: ErrorModel


# How long a client should wait before retrying while the database is unreachable (a restart takes seconds).
RETRY_AFTER_SECONDS = 5

_log = structlog.get_logger(__name__)

# (status, type): `type` is the Java exception simple name, which the Java client keys on.
_DOMAIN: dict[type[errors.CatalogError], tuple[int, str]] = {
    errors.InvalidLocationError: (400, "BadRequestException"),
    errors.IllegalArgumentError: (400, "IllegalArgumentException"),
    # Lakekeeper's type names, which its tests assert.
    errors.ImmutablePropertyModificationError: (400, "ImmutablePropertyModification"),
    errors.ImmutablePropertyRemovalError: (400, "ImmutablePropertyRemoval"),
    errors.NamespaceDepthExceededError: (400, "NamespaceDepthExceeded"),
    errors.BadRequestError: (400, "BadRequestException"),
    errors.NoSuchWarehouseError: (404, "NoSuchWarehouseException"),
    errors.NoSuchNamespaceError: (404, "NoSuchNamespaceException"),
    errors.NoSuchTableError: (404, "NoSuchTableException"),
    errors.NoSuchViewError: (404, "NoSuchViewException"),
    errors.MetadataFileNotFoundError: (404, "NotFoundException"),  # what Iceberg Java's catalogs throw then
    errors.AlreadyExistsError: (409, "AlreadyExistsException"),
    errors.NamespaceNotEmptyError: (409, "NamespaceNotEmptyException"),
    errors.CommitFailedError: (409, "CommitFailedException"),
    errors.UnprocessableEntityError: (422, "UnprocessableEntityException"),
    errors.ForbiddenError: (403, "ForbiddenException"),
    errors.NoSuchUserError: (404, "NoSuchUserException"),
    errors.NoSuchRoleError: (404, "NoSuchRoleException"),
    errors.NoSuchProjectError: (404, "NoSuchProjectException"),
    errors.NotEmptyError: (409, "NotEmptyException"),
    errors.ProtectedError: (409, "ProtectedException"),
    errors.AlreadyBootstrappedError: (409, "CatalogAlreadyBootstrapped"),
    errors.NoSuchPolicyError: (404, "NoSuchPolicyException"),
    errors.NoSuchTaskError: (404, "NoSuchTaskException"),
    errors.TaskFinishedError: (409, "TaskFinishedException"),
}

_HTTP_TYPES = {
    400: "BadRequestException",
    401: "NotAuthorizedException",
    403: "ForbiddenException",
    404: "NotFoundException",
    405: "MethodNotAllowedException",
    410: "GoneException",
    413: "RequestTooLargeException",
    503: "ServiceUnavailableException",
}


def error_body(status: int, type_name: str, message: str) -> bytes:
    """The envelope as bytes, for the few places that answer below the framework."""
    return msgspec.json.encode(IcebergErrorResponse(ErrorModel(message=message, type=type_name, code=status)))


def error_response(status: int, type_name: str, message: str) -> Response[IcebergErrorResponse]:
    body = IcebergErrorResponse(ErrorModel(message=message, type=type_name, code=status))
    return Response(body, status_code=status)


def _domain_status(exc: errors.CatalogError) -> tuple[int, str]:
    for cls in type(exc).__mro__:
        if cls in _DOMAIN:
            return _DOMAIN[cls]
    return 400, "BadRequestException"


def handle_catalog_error(_: Request[Any, Any, Any], exc: errors.CatalogError) -> Response[IcebergErrorResponse]:
    status, type_name = _domain_status(exc)
    return error_response(status, type_name, str(exc))


def handle_http_exception(_: Request[Any, Any, Any], exc: HTTPException) -> Response[IcebergErrorResponse]:
    message = exc.detail
    if isinstance(exc, ValidationException) and exc.extra:
        message = f"{exc.detail}: {exc.extra}"
    type_name = _HTTP_TYPES.get(exc.status_code, "RESTException")
    response = error_response(exc.status_code, type_name, str(message))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def handle_data_error(_: Request[Any, Any, Any], exc: psycopg.errors.DataError) -> Response[IcebergErrorResponse]:
    """Values the database cannot store (NUL characters, numbers out of range) come from the request."""
    return error_response(400, "BadRequestException", f"Invalid value in request: {exc.diag.message_primary}")


def handle_iceberg_validation(_: Request[Any, Any, Any], exc: IcebergValidationError) -> Response[IcebergErrorResponse]:
    return error_response(400, "BadRequestException", f"Invalid table metadata: {exc}")


def handle_program_limit(
    _: Request[Any, Any, Any], exc: psycopg.errors.ProgramLimitExceeded
) -> Response[IcebergErrorResponse]:
    """A value too large for the database (an index row past its page limit) comes from the request."""
    return error_response(400, "BadRequestException", "A value in the request is too large to be stored")


def handle_database_unavailable(
    request: Request[Any, Any, Any], exc: psycopg.OperationalError
) -> Response[IcebergErrorResponse]:
    """The database is unreachable (no connection within the pool timeout, or one lost mid-request): 503.

    No driver text reaches the client (it names hosts and ports). The pool's idle connections are checked
    in the background, so the ones the outage broke are replaced before a request meets them after recovery.
    """
    _log.warning("database unavailable", error=str(exc), error_type=type(exc).__name__)
    built = getattr(request.app.state, "services", None)  # absent when the lifespan never opened
    if built is not None:
        check_idle_connections(built.pool)
    response = error_response(503, "ServiceUnavailableException", "The catalog database is unavailable; retry later")
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def handle_unexpected(_: Request[Any, Any, Any], exc: Exception) -> Response[IcebergErrorResponse]:
    _log.exception("unhandled error", exc_info=exc)
    return error_response(500, "ServiceFailureException", f"Internal error: {type(exc).__name__}")


EXCEPTION_HANDLERS = {
    errors.CatalogError: handle_catalog_error,
    HTTPException: handle_http_exception,
    psycopg.errors.DataError: handle_data_error,
    psycopg.errors.ProgramLimitExceeded: handle_program_limit,
    psycopg.OperationalError: handle_database_unavailable,
    # pyiceberg validates what a request describes (e.g. `decimal(1000,2)`: precision above 38).
    IcebergValidationError: handle_iceberg_validation,
    Exception: handle_unexpected,
}
