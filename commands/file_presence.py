"""Whether metadata files are still in storage: a local file's stat on the loop, object stores' HEADs in batches.

A HEAD blocks for a round trip, so it runs off the event loop, in batches: one worker-thread hop per batch, not per
request. A check waits for the next batch, which starts after it was asked for (never an answer looked up before the
request came), and all the checks asked for while one batch runs go in the next. A local file's check (one strict
`realpath`: a few `lstat`s of cached directory entries) costs a fraction of even a shared thread hop (its futures,
the wake-ups of both threads), so it is answered at once on the loop: this takes a local warehouse's disk not to
hang on a stat (a network mount that does would stall the loop; its other file work but a commit's new metadata
file, commands/tabulars.py, stays in worker threads).
"""

from __future__ import annotations

import asyncio

from catalog_es.storage.files import WarehouseStorage

_Check = tuple[WarehouseStorage, str, asyncio.Future[bool]]


class FilePresence:
    def __init__(self) -> None:
        self._pending: list[_Check] = []
        self._draining: asyncio.Task[None] | None = None

    async def missing(self, storage: WarehouseStorage, location: str) -> bool:
        """Whether storage says for certain that no file is at `location` (see `WarehouseStorage.file_missing`).

        Raises: what `WarehouseStorage.file_missing` raises (a location outside the warehouse).
        """
        if storage.local:
            return storage.file_missing(location)
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append((storage, location, answer))
        if self._draining is None:
            self._draining = asyncio.create_task(self._drain())
        return await answer

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    outcomes = await asyncio.to_thread(_check_all, batch)
                except BaseException as exc:  # e.g. cancelled at shutdown: no check waits forever
                    for _, _, answer in batch:
                        if answer.done():
                            continue
                        if isinstance(exc, Exception):
                            answer.set_exception(exc)
                        else:
                            answer.cancel()
                    raise
                for (_, _, answer), outcome in zip(batch, outcomes, strict=True):
                    if answer.done():  # its request was cancelled meanwhile
                        continue
                    if isinstance(outcome, Exception):
                        answer.set_exception(outcome)
                    else:
                        answer.set_result(outcome)
        finally:
            self._draining = None


def _check_all(batch: list[_Check]) -> list[bool | Exception]:
    """In the worker thread: each location once per batch."""
    seen: dict[tuple[int, str], bool | Exception] = {}
    outcomes: list[bool | Exception] = []
    for storage, location, _ in batch:
        key = (id(storage), location)
        if key not in seen:
            try:
                seen[key] = storage.file_missing(location)
            except Exception as exc:  # handed to the check that asked, raised there
                seen[key] = exc
        outcomes.append(seen[key])
    return outcomes
