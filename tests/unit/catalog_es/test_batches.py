"""catalog_es.batches: what each ask is answered, which batch takes it, how many batches run at once."""

from __future__ import annotations

import asyncio

import pytest

from catalog_es.batches import Batches


class Recorder:
    """A batch run that records its batches, answers each ask doubled (an exception for a negative one) and can be
    held open until released."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.batches: list[list[int]] = []
        self.running = 0
        self.most_running = 0
        self.release = asyncio.Event()
        self.fail = fail

    async def __call__(self, batch: list[int]) -> list[int | Exception]:
        self.batches.append(batch)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await self.release.wait()
        finally:
            self.running -= 1
        if self.fail is not None:
            raise self.fail
        return [ValueError(ask) if ask < 0 else ask * 2 for ask in batch]


def test_asks_made_while_a_batch_runs_go_together_in_the_next() -> None:
    asyncio.run(_asks_made_while_a_batch_runs_go_together_in_the_next())


async def _asks_made_while_a_batch_runs_go_together_in_the_next() -> None:
    run = Recorder()
    batches: Batches[int, int] = Batches(run)
    first = asyncio.create_task(batches.ask(1))
    await asyncio.sleep(0)
    later = [asyncio.create_task(batches.ask(n)) for n in (2, 3, 4)]
    await asyncio.sleep(0)
    run.release.set()

    assert [await first, *[await task for task in later]] == [2, 4, 6, 8]
    assert run.batches == [[1], [2, 3, 4]]


def test_an_ask_gets_its_own_exception_and_its_neighbours_their_values() -> None:
    asyncio.run(_an_ask_gets_its_own_exception_and_its_neighbours_their_values())


async def _an_ask_gets_its_own_exception_and_its_neighbours_their_values() -> None:
    run = Recorder()
    run.release.set()
    batches: Batches[int, int] = Batches(run)
    results = await asyncio.gather(batches.ask(5), batches.ask(-1), batches.ask(6), return_exceptions=True)

    assert results[0] == 10
    assert results[2] == 12
    assert isinstance(results[1], ValueError)


def test_a_failed_batch_fails_every_ask_it_took_and_the_next_ask_is_answered() -> None:
    asyncio.run(_a_failed_batch_fails_every_ask_it_took_and_the_next_ask_is_answered())


async def _a_failed_batch_fails_every_ask_it_took_and_the_next_ask_is_answered() -> None:
    run = Recorder(fail=RuntimeError("statement failed"))
    run.release.set()
    batches: Batches[int, int] = Batches(run)
    results = await asyncio.gather(batches.ask(1), batches.ask(2), return_exceptions=True)
    run.fail = None

    assert [str(result) for result in results] == ["statement failed"] * 2
    assert await batches.ask(3) == 6


def test_no_more_than_at_once_batches_run_together() -> None:
    asyncio.run(_no_more_than_at_once_batches_run_together())


async def _no_more_than_at_once_batches_run_together() -> None:
    run = Recorder()
    batches: Batches[int, int] = Batches(run, at_once=2)
    tasks = []
    for n in range(6):
        tasks.append(asyncio.create_task(batches.ask(n)))
        await asyncio.sleep(0)
    run.release.set()

    assert await asyncio.gather(*tasks) == [0, 2, 4, 6, 8, 10]
    assert run.most_running == 2
    assert sorted(ask for batch in run.batches for ask in batch) == list(range(6))


def test_asks_of_a_cancelled_batch_are_cancelled_not_left_waiting() -> None:
    asyncio.run(_asks_of_a_cancelled_batch_are_cancelled_not_left_waiting())


async def _asks_of_a_cancelled_batch_are_cancelled_not_left_waiting() -> None:
    run = Recorder(fail=asyncio.CancelledError())
    run.release.set()
    batches: Batches[int, int] = Batches(run)

    with pytest.raises(asyncio.CancelledError):
        await batches.ask(1)
