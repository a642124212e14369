"""Which catalog API a CLI command talks to: the one given, else the `serve` its data dir records, else none."""

from __future__ import annotations

from api.cli.session import fail
from api.settings import Settings

_PROBE_SECONDS = 5.0


def resolve_catalog_uri(settings: Settings, given: str | None, configured: str | None = None) -> str:
    """`--catalog-uri`, else the configured one, else the URI the data dir's running `serve` recorded; and some
    HTTP server must answer there. Otherwise the command stops with a message naming `--catalog-uri`, before it
    does anything it could report as failed.
    """
    import httpx  # noqa: PLC0415 - the CLI imports lazily (fast --help)

    uri = given or configured
    if uri is None:
        from api.runtime.serving_record import recorded_server  # noqa: PLC0415

        record = recorded_server(settings.data_path)
        if record is None:
            fail(
                f"no running `catalog-es serve` is recorded in {settings.data_path}: start it with this --data-dir, "
                "or give the catalog's address with --catalog-uri (e.g. http://127.0.0.1:8181/catalog)"
            )
        uri = record.catalog_uri
    try:
        httpx.get(f"{uri.rstrip('/')}/v1/config", timeout=_PROBE_SECONDS)
    except httpx.HTTPError:
        fail(f"no catalog answers at {uri}: start `catalog-es serve`, or give its address with --catalog-uri")
    return uri
