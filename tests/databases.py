"""A new, empty PostgreSQL database for a test or a module, dropped afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo


def _execute(admin_dsn: str, statement: str) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(statement)


@contextmanager
def new_database(admin_dsn: str, prefix: str = "t") -> Iterator[str]:
    """A database named `<prefix>_<random>` on the server of `admin_dsn`; yields its DSN and drops it (with any
    session still connected) afterwards, also when the body raised."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    _execute(admin_dsn, f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(**{**conninfo_to_dict(admin_dsn), "dbname": name})
    finally:
        _execute(admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
