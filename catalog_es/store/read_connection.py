"""A pooled connection for one read outside any transaction, without the pool context's per-use commit."""

from __future__ import annotations

from types import TracebackType

from catalog_es.store.database import Connection, Pool


class ReadConnection:
    """`async with ReadConnection(pool) as conn:` takes a connection as `pool.connection()` does and gives it back
    with `putconn`, skipping the connection's own context (a commit, under its lock, of an autocommit connection
    that holds no transaction). One left in a transaction or a broken one is rolled back or replaced by the pool
    as ever (`putconn` checks its state)."""

    __slots__ = ("_conn", "_pool")

    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def __aenter__(self) -> Connection:
        self._conn = await self._pool.getconn()
        return self._conn

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._pool.putconn(self._conn)
