"""The task queue on PostgreSQL: scheduling inside a command, claims from concurrent workers, leases, retries."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from catalog_es.errors import NoSuchTaskError, TaskFinishedError
from catalog_es.events.tasks import TaskCancelled, TaskFailed, TaskScheduled, TaskStarted, TaskSucceeded
from catalog_es.store.eventstore import EventMetadata
from commands.task_handlers import QueueRegistry, TaskRefusedError
from commands.task_worker import TaskWorker
from commands.tasks import (
    NewTask,
    cancel_task,
    claim_task,
    complete_task,
    configure_task_queue,
    fail_task,
    record_progress,
    renew_lease,
    reschedule_task,
    schedule_task,
    task_progress,
)
from projections.registry import TASKS
from projections.task_views import task_details
from projections.verify import verify_projection

META = EventMetadata(actor="alice", request_id="req-tasks")
QUEUE = "tabular_purge"


class SteppedClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.moment = datetime(2030, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


async def _schedule(catalog, count: int = 1, **options) -> list[uuid.UUID]:
    ids = []
    async with catalog.store.transaction(META) as tx:
        for _ in range(count):
            new = NewTask(
                queue=QUEUE,
                warehouse_id=catalog.warehouse_id,
                entity_type="table",
                entity_id=uuid.uuid4(),
                payload={"location": "file:///nowhere"},
                **options,
            )
            ids.append(await schedule_task(tx, catalog.ctx, new))
    return ids


async def _task_events(catalog, task_id: uuid.UUID):
    return [e.decode() for e in await catalog.store.read() if e.stream_id == f"task-{task_id}"]


def test_schedule_task_records_event_with_actor_and_queues_row_in_same_transaction(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            [task_id] = await _schedule(catalog)
            recorded = [e for e in await catalog.store.read() if e.stream_id == f"task-{task_id}"]
            claimed = await claim_task(catalog.ctx, [QUEUE], "w1", 30)
            return task_id, recorded, claimed

    task_id, recorded, claimed = asyncio.run(scenario())
    assert [e.type for e in recorded] == [TaskScheduled.type_name]
    assert recorded[0].extensions["actor"] == "alice"
    assert claimed is not None
    assert claimed.task_id == task_id
    assert claimed.attempt == 1
    assert claimed.payload == {"location": "file:///nowhere"}


def test_schedule_task_leaves_nothing_when_command_transaction_fails(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            new = NewTask(
                queue=QUEUE, warehouse_id=catalog.warehouse_id, entity_type="table", entity_id=uuid.uuid4(), payload={}
            )

            async def failing_command() -> None:
                async with catalog.store.transaction(META) as tx:
                    await schedule_task(tx, catalog.ctx, new)
                    raise RuntimeError("the command failed after scheduling")

            with pytest.raises(RuntimeError):
                await failing_command()
            return await claim_task(catalog.ctx, [QUEUE], "w1", 30), await catalog.store.read()

    claimed, events = asyncio.run(scenario())
    assert claimed is None
    assert not [e for e in events if e.type.startswith("io.catalog-es.task.")]


def test_claim_task_gives_each_task_to_one_worker_when_workers_claim_concurrently(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ids = await _schedule(catalog, 12)

            async def worker(name: str) -> list[uuid.UUID]:
                taken = []
                while (task := await claim_task(catalog.ctx, [QUEUE], name, 60)) is not None:
                    taken.append(task.task_id)
                    assert await complete_task(catalog.ctx, task, {"by": name})
                return taken

            results = await asyncio.gather(*(worker(f"w{n}") for n in range(4)))
            started = [e for e in await catalog.store.read() if e.type == TaskStarted.type_name]
            return ids, results, started

    ids, results, started = asyncio.run(scenario())
    taken = [task_id for result in results for task_id in result]
    assert sorted(taken) == sorted(ids)  # every task once: none twice, none left
    assert len(started) == len(ids)
    assert sum(1 for result in results if result) >= 2  # the claims really ran side by side


def test_claim_task_skips_live_lease_and_reclaims_when_lease_ran_out(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            clock = SteppedClock()
            ctx = dataclasses.replace(catalog.ctx, clock=clock)
            [task_id] = await _schedule(catalog, due_at_ms=int(clock.now().timestamp() * 1000))
            first = await claim_task(ctx, [QUEUE], "crashing", 10)
            assert first is not None
            assert await record_progress(ctx, first, {"done": 3})
            clock.advance(5)
            assert await claim_task(ctx, [QUEUE], "other", 10) is None  # the lease still holds
            clock.advance(6)
            second = await claim_task(ctx, [QUEUE], "other", 10)
            assert second is not None
            assert second.attempt == 2
            progress = await task_progress(ctx, second)
            late = await complete_task(ctx, first, {"by": "crashing"})  # the first worker lost it
            renewed = await renew_lease(ctx, first, 10)
            done = await complete_task(ctx, second, {"by": "other"})
            return task_id, progress, late, renewed, done, await _task_events(catalog, task_id)

    _task_id, progress, late, renewed, done, events = asyncio.run(scenario())
    assert progress == {"done": 3}
    assert (late, renewed, done) == (False, False, True)
    assert [type(e) for e in events] == [TaskScheduled, TaskStarted, TaskFailed, TaskStarted, TaskSucceeded]
    assert [e.worker for e in events if isinstance(e, TaskStarted)] == ["crashing", "other"]
    assert events[-1].result == {"by": "other"}


def test_fail_task_retries_with_doubling_backoff_then_fails_for_good(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            clock = SteppedClock()
            ctx = dataclasses.replace(catalog.ctx, clock=clock)
            [task_id] = await _schedule(catalog, max_attempts=3, due_at_ms=int(clock.now().timestamp() * 1000))
            delays = []
            for attempt in (1, 2, 3):
                task = await claim_task(ctx, [QUEUE], "w", 30)
                assert task is not None
                assert task.attempt == attempt
                assert await fail_task(ctx, task, f"boom {attempt}", backoff_seconds=2)
                failed = (await _task_events(catalog, task_id))[-1]
                if failed.retry_at_ms is not None:
                    delays.append((failed.retry_at_ms - int(clock.now().timestamp() * 1000)) / 1000)
                    clock.advance(delays[-1] - 0.5)
                    assert await claim_task(ctx, [QUEUE], "w", 30) is None  # not due yet
                    clock.advance(0.5)
            clock.advance(10_000)
            return delays, await claim_task(ctx, [QUEUE], "w", 30), await _task_events(catalog, task_id)

    delays, after, events = asyncio.run(scenario())
    assert delays == [2.0, 4.0]
    assert after is None
    assert isinstance(events[-1], TaskFailed)
    assert events[-1].retry_at_ms is None
    assert events[-1].error == "boom 3"


def test_cancel_task_stops_claims_and_running_worker_when_cancelled(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            waiting, running = await _schedule(catalog, 2)
            task = await claim_task(catalog.ctx, [QUEUE], "w", 30)
            assert task is not None
            other = waiting if task.task_id == running else running
            await cancel_task(catalog.ctx, task.task_id, META)
            await cancel_task(catalog.ctx, other, META)
            renewed = await renew_lease(catalog.ctx, task, 30)
            completed = await complete_task(catalog.ctx, task, {})
            with pytest.raises(TaskFinishedError):
                await cancel_task(catalog.ctx, other, META)
            with pytest.raises(NoSuchTaskError):
                await cancel_task(catalog.ctx, uuid.uuid4(), META)
            claimed = await claim_task(catalog.ctx, [QUEUE], "w", 30)
            cancelled = [e for e in await catalog.store.read() if e.type == TaskCancelled.type_name]
            return renewed, completed, claimed, cancelled

    renewed, completed, claimed, cancelled = asyncio.run(scenario())
    assert (renewed, completed, claimed) == (False, False, None)
    assert [e.extensions["actor"] for e in cancelled] == ["alice", "alice"]


def test_verify_finds_task_read_model_identical_to_replay_when_every_task_event_was_recorded(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            clock = SteppedClock()
            ctx = dataclasses.replace(catalog.ctx, clock=clock)
            now_ms = int(clock.now().timestamp() * 1000)
            ids = await _schedule(catalog, 4, max_attempts=2, due_at_ms=now_ms)
            succeeding, failing, running = [await claim_task(ctx, [QUEUE], "w", 30) for _ in range(3)]
            assert succeeding is not None
            assert failing is not None
            assert running is not None
            await complete_task(ctx, succeeding, {"deleted": 3})
            await fail_task(ctx, failing, "boom")  # due again later
            await cancel_task(ctx, running.task_id, META)
            [waiting] = set(ids) - {succeeding.task_id, failing.task_id, running.task_id}
            await reschedule_task(ctx, waiting, now_ms + 60_000, META)
            await configure_task_queue(ctx, catalog.warehouse_id, QUEUE, {"max": 1}, 60, META)
            async with catalog.store.connection() as conn:
                verification = await verify_projection(conn, TASKS)
                cursor = await conn.execute("SELECT status, count(*) FROM tasks GROUP BY status ORDER BY status")
                statuses = await cursor.fetchall()
            return verification, statuses

    verification, statuses = asyncio.run(scenario())
    assert verification.identical, verification.diffs
    assert verification.position > 0
    assert statuses == [("cancelled", 1), ("scheduled", 2), ("success", 1)]  # the failed one waits for its retry


def test_worker_fails_task_for_good_and_keeps_progress_when_handler_refuses(open_catalog):
    async def refuse(task, ctx):
        assert await record_progress(ctx, task, {"phase": "refused", "uncovered": ["file:///elsewhere"]})
        raise TaskRefusedError("not covered")

    async def scenario():
        async with open_catalog() as catalog:
            [task_id] = await _schedule(catalog, max_attempts=5)
            worker = TaskWorker(catalog.ctx, QueueRegistry({QUEUE: refuse}), "w", slots=1)
            ran = await worker.run_until_idle()
            async with catalog.store.connection() as conn:
                found = await task_details(conn, [catalog.warehouse_id], task_id)
            return ran, found, await _task_events(catalog, task_id)

    ran, found, events = asyncio.run(scenario())
    assert ran == 1  # one attempt of five: a refusal is not retried
    assert isinstance(events[-1], TaskFailed)
    assert (events[-1].retry_at_ms, events[-1].error) == (None, "not covered")
    assert found is not None
    row, _attempts = found
    assert row.status == "failed"
    assert row.progress == {"phase": "refused", "uncovered": ["file:///elsewhere"]}
