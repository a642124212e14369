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

from catalog_es.batches import Batches
from catalog_es.storage.files import WarehouseStorage

_Check = tuple[WarehouseStorage, str]


class FilePresence:
    def __init__(self) -> None:
        self._batches: Batches[_Check, bool] = Batches(_check_off_loop)

    async def missing(self, storage: WarehouseStorage, location: str) -> bool:
        """Whether storage says for certain that no file is at `location` (see `WarehouseStorage.file_missing`).

        Raises: what `WarehouseStorage.file_missing` raises (a location outside the warehouse).
        """
        if storage.local:
            return storage.file_missing(location)
        return await self._batches.ask((storage, location))


async def _check_off_loop(batch: list[_Check]) -> list[bool | Exception]:
    return await asyncio.to_thread(_check_all, batch)


def _check_all(batch: list[_Check]) -> list[bool | Exception]:
    """In the worker thread: each location once per batch."""
    seen: dict[tuple[int, str], bool | Exception] = {}
    outcomes: list[bool | Exception] = []
    for storage, location in batch:
        key = (id(storage), location)
        if key not in seen:
            try:
                seen[key] = storage.file_missing(location)
            except Exception as exc:  # handed to the check that asked, raised there
                seen[key] = exc
        outcomes.append(seen[key])
    return outcomes
