"""Calls asked for while a batch runs go together in the next one: the catalog's one way to batch concurrent asks.

Each ask waits for a batch that starts after it was asked (never an answer looked up before it came). At most
`at_once` batches run together; whatever is asked meanwhile waits for the next. A batch answers each ask with a
value or an exception of its own; a batch that fails as a whole fails every ask it took, with its error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

Ask = TypeVar("Ask")
Answer = TypeVar("Answer")

Run = Callable[[list[Ask]], Awaitable[list[Answer | Exception]]]
"""Answers a batch: one value or exception per ask, in order."""


class Batches(Generic[Ask, Answer]):
    def __init__(self, run: Run[Ask, Answer], *, at_once: int = 1) -> None:
        self._run, self._at_once = run, at_once
        self._pending: list[tuple[Ask, asyncio.Future[Answer]]] = []
        self._draining = 0  # counted down by a drain as it finds nothing pending (no await between): no ask is left
        self._tasks: set[asyncio.Task[None]] = set()  # held while they run

    async def ask(self, ask: Ask) -> Answer:
        """Raises: the exception the batch gave this ask, or the batch's own."""
        answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending.append((ask, answer))
        if self._draining < self._at_once:
            self._draining += 1
            task = asyncio.create_task(self._drain())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await answer

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    outcomes = await self._run([ask for ask, _ in batch])
                except Exception as exc:
                    outcomes = [exc] * len(batch)
                except BaseException:  # e.g. cancelled at shutdown: no ask waits forever
                    for _, answer in batch:
                        answer.cancel()
                    raise
                for (_, answer), outcome in zip(batch, outcomes, strict=True):
                    if answer.done():  # its asker was cancelled meanwhile
                        continue
                    if isinstance(outcome, Exception):
                        answer.set_exception(outcome)
                    else:
                        answer.set_result(outcome)
        finally:
            self._draining -= 1
