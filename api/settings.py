"""Settings: defaults, overridden by `CATALOG_ES__*` environment variables (nested keys with `__`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec

ENV_PREFIX = "CATALOG_ES__"


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything configurable. Without `pg_dsn` the catalog runs an embedded PostgreSQL in `data_dir`."""

    pg_dsn: str | None = None
    data_dir: str = ".catalog-es"
    host: str = "127.0.0.1"
    port: int = 8181
    default_warehouse: str = "demo"
    event_source: str = "/catalog-es"
    log_level: str = "info"
    log_json: bool = True
    max_request_body_bytes: int = 10_000_000
    idempotency_key_lifetime_minutes: int = 30

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser().resolve()

    @property
    def default_warehouse_location(self) -> str:
        return (self.data_path / "warehouse" / self.default_warehouse).as_uri()

    @property
    def idempotency_key_lifetime(self) -> timedelta:
        return timedelta(minutes=self.idempotency_key_lifetime_minutes)

    @property
    def public_uri(self) -> str:
        return f"http://{self.host}:{self.port}/catalog"


def _nested(environ: Mapping[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, value in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        *parents, leaf = name.removeprefix(ENV_PREFIX).lower().split("__")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise msgspec.ValidationError(f"{name} conflicts with {ENV_PREFIX}{part.upper()}")
        if isinstance(node.get(leaf), dict):
            raise msgspec.ValidationError(f"{name} is both a setting and a group of settings")
        node[leaf] = value
    return tree


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Read settings from the environment; keyword overrides (e.g. CLI options) win when not None.

    Raises:
        msgspec.ValidationError: an unknown or malformed setting.
    """
    values = _nested(os.environ if environ is None else environ)
    values.update({key: value for key, value in overrides.items() if value is not None})
    return msgspec.convert(values, Settings, strict=False)
