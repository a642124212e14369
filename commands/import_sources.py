"""What an import requested through the API may make the server contact: the same outbound rules as storage.

A source's properties name hosts and files the server then opens (a REST or Hive URI, a Glue, DynamoDB or S3
endpoint, a SQL catalog's database). Through the API that is someone else's choice, so each is checked first: a
host against the operator's allow-list (`CATALOG_ES__S3_ENDPOINT_ALLOWED_HOSTS`; metadata and link-local addresses
never), a SQLite file against the file storage roots (never the server's own data). Messages name the property
and host only, never the value (a URI may carry a password). `catalog-es import` is the operator's own and is not
checked.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from catalog_es.errors import BadRequestError, StorageAccessError
from commands.context import CommandContext, off_loop

_ADDRESS_ENDINGS = ("uri", "url", "endpoint", "host")  # uri, oauth2-server-uri, glue.endpoint, gcs.service.host …


def _addresses(properties: dict[str, str]) -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in properties.items() if k.lower().endswith(_ADDRESS_ENDINGS))


def _check(ctx: CommandContext, key: str, value: str) -> None:
    scheme = value.partition(":")[0].lower()
    if scheme.startswith("sqlite"):
        database = value.partition(":///")[2].split("?", 1)[0]
        if not database or database == ":memory:":
            return
        if not os.path.isabs(database):
            raise BadRequestError(f"The source's {key} must name its SQLite file by an absolute path")
        ctx.file_roots.check(Path(database).as_uri())
        return
    parts = urlsplit(value if "://" in value else f"http://{value}")  # a bare `host[:port]`
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host:
        raise BadRequestError(f"The source's {key} names no host this server could check")
    web = scheme if scheme in ("http", "https") else "http"
    try:
        ctx.endpoints.check(f"{web}://{host}" + (f":{port}" if port else ""))
    except StorageAccessError as exc:
        raise BadRequestError(f"The source's {key} is not allowed: host {host!r} ({exc})") from None


def _checked(ctx: CommandContext, key: str, value: str) -> None:
    try:
        _check(ctx, key, value)
    except ValueError:  # a malformed URL (`http://[x`), a NUL in a path
        raise BadRequestError(f"The source's {key} is malformed") from None


async def check_source_reachable(ctx: CommandContext, properties: dict[str, str]) -> None:
    """Raises: BadRequestError for a host or file the server may not open for a request, or a malformed one."""
    for key, value in _addresses(properties):
        await off_loop(_checked, ctx, key, value)
