"""What an S3 request asks to touch: the objects behind its URL (and body), checked against a table's location.

Pure: the remote-signing route decides with these functions before anything is signed. A request is
refused (`ForbiddenError`) unless every object it names lies inside the table's location on the
warehouse's own bucket and endpoint.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree

import msgspec

from catalog_es.errors import ForbiddenError
from catalog_es.storage.profiles import S3Profile
from catalog_es.storage.signing import Privilege, Scope

# GET/HEAD read data, PUT/POST/DELETE write it (Lakekeeper: read_data / write_data); nothing else is signed.
_PRIVILEGES: Final[dict[str, Privilege]] = {
    "GET": "select",
    "HEAD": "select",
    "PUT": "modify",
    "POST": "modify",
    "DELETE": "modify",
}
# Query parameters signed per request kind: the listing's, DeleteObjects', and per object operation (method, has
# `uploadId`, has `uploads`) those of Iceberg's clients; `x-id` names the operation (newer AWS SDKs add it).
_LISTING_PARAMETERS: Final = frozenset(
    {"prefix", "list-type", "delimiter", "continuation-token", "start-after", "max-keys", "encoding-type"}
    | {"fetch-owner", "marker", "x-id"}
)
_DELETE_PARAMETERS: Final = frozenset({"delete", "x-id"})
_OBJECT_OPERATIONS: Final[dict[tuple[str, bool, bool], tuple[frozenset[str], str]]] = {
    ("GET", False, False): (frozenset({"partNumber", "x-id"}), "GetObject"),
    ("GET", True, False): (frozenset({"uploadId", "max-parts", "part-number-marker", "x-id"}), "ListParts"),
    ("HEAD", False, False): (frozenset({"partNumber", "x-id"}), "HeadObject"),
    ("PUT", False, False): (frozenset({"x-id"}), "PutObject"),
    ("PUT", True, False): (frozenset({"uploadId", "partNumber", "x-id"}), "UploadPart"),
    ("POST", False, True): (frozenset({"uploads", "x-id"}), "CreateMultipartUpload"),
    ("POST", True, False): (frozenset({"uploadId", "x-id"}), "CompleteMultipartUpload"),
    ("DELETE", False, False): (frozenset({"x-id"}), "DeleteObject"),
    ("DELETE", True, False): (frozenset({"uploadId", "x-id"}), "AbortMultipartUpload"),
}
_AWS_SUFFIX: Final = ".amazonaws.com"
_S3_SCHEMES: Final = ("s3", "s3a", "s3n")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


class S3Request(msgspec.Struct, frozen=True):
    """The parts of a request to S3 that the signing decision reads."""

    method: str
    uri: str
    body: str | None = None


def privilege_for(method: str) -> Privilege:
    """Raises: ForbiddenError for a method that is neither a read nor a write (PATCH, OPTIONS, ...)."""
    privilege = _PRIVILEGES.get(method.upper())
    if privilege is None:
        raise ForbiddenError(f"Requests with method {method!r} are not signed")
    return privilege


def request_scope(profile: S3Profile, request: S3Request) -> Scope:
    """The operation the request is and the objects it reads or writes.

    Object requests name one key, with only the query parameters of the object and multipart-upload operations
    Iceberg's clients use (`?acl`, `?tagging`, `?versionId`, `?restore`, ... are refused). Requests on the bucket
    itself are signed in two cases only: a listing (ListObjects/ListObjectsV2) with exactly one `prefix`, and
    DeleteObjects with its XML body (the keys it deletes); every other bucket sub-resource (`?acl`, `?policy`,
    `?versions`, `?cors`, `?lifecycle`, ...) is refused. A repeated query parameter is refused everywhere: S3
    and this check could read different values of it.

    Raises:
        ForbiddenError: another host, bucket or style; a `.`/`..` segment; a bucket request of another kind; a
            query parameter outside the operation's.
    """
    privilege = privilege_for(request.method)
    bucket, key, query = split_url(profile, request.uri)
    if bucket != profile.bucket:
        raise ForbiddenError("The request names another bucket than the warehouse's")
    method = request.method.upper()
    if key:
        _check_key(key)
        return Scope((f"s3://{bucket}/{key}",), privilege, operation=_object_operation(method, query))
    if method == "GET" and "prefix" in query:
        _only(query, _LISTING_PARAMETERS, "a listing")
        prefix = query["prefix"]
        _check_key(prefix)
        operation = "ListObjectsV2" if query.get("list-type") == "2" else "ListObjects"
        return Scope((f"s3://{bucket}/{prefix}",), privilege, listing=True, operation=operation)
    if method == "POST" and "delete" in query:
        _only(query, _DELETE_PARAMETERS, "DeleteObjects")
        keys = deleted_keys(request.body)
        for deleted in keys:
            _check_key(deleted)
        return Scope(tuple(f"s3://{bucket}/{deleted}" for deleted in keys), privilege, operation="DeleteObjects")
    raise ForbiddenError(
        "Only listings with one prefix under a table and DeleteObjects with its body are signed on the bucket"
    )


def _object_operation(method: str, query: dict[str, str]) -> str:
    """The S3 operation of an object request. Raises: ForbiddenError for one outside Iceberg's clients' set."""
    names = {name for name in query if not (method in ("GET", "HEAD") and name.startswith("response-"))}
    upload = "uploadId" in names
    known = _OBJECT_OPERATIONS.get((method, upload, "uploads" in names))
    if known is None:
        raise ForbiddenError(f"This {method} request on an object is not an operation that is signed")
    allowed, operation = known
    _only(names, allowed, operation)
    return operation


def _only(names: Iterable[str], allowed: frozenset[str], operation: str) -> None:
    extra = sorted(name for name in names if name not in allowed)
    if extra:
        raise ForbiddenError(f"Query parameter {extra[0]!r} is not signed for {operation}")


def inside(scope: Scope, table_location: str) -> bool:
    """Whether every location of the scope lies in the table's location.

    An object may be the table location itself or below it; a listing prefix must end inside the
    table's directory (`<table>/…`), or it would also list a sibling whose name starts alike.
    """
    scheme, _, rest = table_location.strip().partition("://")
    if scheme not in _S3_SCHEMES or not rest:
        return False
    # Compared as text, never parsed as a URL: a location may hold `?`, `#`, `%` or spaces (Lakekeeper's tests do).
    table = f"s3://{rest}".rstrip("/")
    for location in scope.locations:
        if scope.listing:
            if not location.startswith(table + "/"):
                return False
        elif location != table and not location.startswith(table + "/"):
            return False
    return bool(scope.locations)


def split_url(profile: S3Profile, uri: str) -> tuple[str, str, dict[str, str]]:
    """(bucket, decoded key, decoded query) of a path-style or virtual-host URL on the profile's endpoint.

    `remote-signing-url-style` picks the style; `auto` takes the bucket from the host when the host is a
    subdomain of the endpoint's, else from the path.

    Raises: ForbiddenError when the URL is not on the warehouse's endpoint or is malformed.
    """
    parts = urlsplit(uri)
    host, port = (parts.hostname or "").lower(), _port(parts.scheme, parts.port if _valid_port(uri) else -1)
    if parts.scheme not in _DEFAULT_PORTS or not host or parts.fragment:
        raise ForbiddenError("The request URL is not an http(s) URL on the warehouse's endpoint")
    style = _style(profile, host, port, parts.scheme)
    path = parts.path
    if style == "path":
        bucket, _, raw_key = path.removeprefix("/").partition("/")
        bucket = unquote(bucket)
    else:
        bucket, raw_key = host.split(".", 1)[0], path.removeprefix("/")
    return bucket, unquote(raw_key), _query(parts.query)


def deleted_keys(body: str | None) -> list[str]:
    """The keys of a DeleteObjects body (`<Delete><Object><Key>…`), in order.

    Raises: ForbiddenError without a body or with one that is not such a document.
    """
    if not body:
        raise ForbiddenError("DeleteObjects is signed only with its body (the keys it deletes)")
    try:
        root = ElementTree.fromstring(body)  # noqa: S314 - expat refuses entity expansion bombs since 2.4.1
    except ElementTree.ParseError:
        raise ForbiddenError("The DeleteObjects body is not an XML document") from None
    if _local(root.tag) != "Delete":
        raise ForbiddenError("The DeleteObjects body is not a <Delete> document")
    keys = [
        (child.text or "")
        for item in root
        if _local(item.tag) == "Object"
        for child in item
        if _local(child.tag) == "Key"
    ]
    if not keys:
        raise ForbiddenError("The DeleteObjects body names no key")
    return keys


def _style(profile: S3Profile, host: str, port: int, scheme: str) -> Literal["path", "virtual"]:
    endpoint_hosts, endpoint_port, endpoint_scheme = _endpoint(profile)
    if port != endpoint_port or scheme != endpoint_scheme:
        raise ForbiddenError("The request URL is not on the warehouse's endpoint")
    on_endpoint = host in endpoint_hosts
    as_subdomain = any(host.endswith("." + name) and host.count(".") == name.count(".") + 1 for name in endpoint_hosts)
    wanted = profile.remote_signing_url_style
    if on_endpoint and wanted != "virtual_host":
        return "path"
    if as_subdomain and wanted != "path":
        return "virtual"
    raise ForbiddenError(f"The request URL is not a {wanted.replace('_', '-')}-style URL on the warehouse's endpoint")


def _endpoint(profile: S3Profile) -> tuple[frozenset[str], int, str]:
    """The host names, port and scheme requests for this profile go to (AWS's regional names without an endpoint)."""
    if profile.endpoint:
        parts = urlsplit(profile.endpoint)
        return frozenset({(parts.hostname or "").lower()}), _port(parts.scheme, parts.port), parts.scheme
    region = profile.region
    names = {
        "s3" + _AWS_SUFFIX,
        f"s3.{region}{_AWS_SUFFIX}",
        f"s3-{region}{_AWS_SUFFIX}",
        f"s3.dualstack.{region}{_AWS_SUFFIX}",
    }
    return frozenset(names), 443, "https"


def _valid_port(uri: str) -> bool:
    try:
        urlsplit(uri).port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    return True


def _port(scheme: str, port: int | None) -> int:
    if port is not None:
        return port
    return _DEFAULT_PORTS.get(scheme, -1)


def _query(query: str) -> dict[str, str]:
    """Decoded query parameters. A raw `+` is refused: S3 could read it as a space, another key than checked; a
    repeated name too: S3 could act on another of its values than the one checked."""
    params: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        name, _, value = pair.partition("=")
        if "+" in value or "+" in name:
            raise ForbiddenError("Encode '+' in query parameters as %2B")
        decoded = unquote(name)
        if decoded in params:
            raise ForbiddenError(f"Query parameter {decoded!r} is repeated")
        params[decoded] = unquote(value)
    return params


def _check_key(key: str) -> None:
    segments = key.split("/")
    if any(segment in (".", "..") for segment in segments):
        raise ForbiddenError("Keys with '.' or '..' segments are not signed")
    if any(ord(char) < 32 for char in key):
        raise ForbiddenError("Keys with control characters are not signed")


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]
