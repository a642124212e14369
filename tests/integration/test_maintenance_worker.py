"""The maintenance queue on the one task runner, on a real PostgreSQL, with a fake in place of Spark: jobs bounded
in parallelism, outcomes recorded by `system:maintenance`, a failed job retried with backoff, a dropped table
skipped, and a job whose lease is taken away stopped (issue 30)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

from api.container import task_queues
from api.settings import Settings
from catalog_es.identifiers import Namespace
from catalog_es.maintenance.jobs import MAINTENANCE_QUEUE, InheritedFrom, MaintenanceJob, encode_job
from catalog_es.maintenance.policy_types import decode_policy, encode_policy
from catalog_es.spark.maintenance import JobOutcome
from catalog_es.store.eventstore import EventMetadata
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tabular_lifecycle import DropTable, handle_drop_table
from commands.task_handlers import MAINTENANCE
from commands.task_worker import TaskWorker
from commands.tasks import NewTask, cancel_task, claim_task, schedule_task
from tests.integration.conftest import OpenCatalog

META = EventMetadata(actor="admin")
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _worker(ctx: Any, spark: Any, *, lease_seconds: float = 30) -> TaskWorker:
    """The runner `catalog-es maintenance run` builds: the container's registry, queue `maintenance` only."""
    registry = task_queues(Settings(), maintenance=spark).only(MAINTENANCE)
    return TaskWorker(ctx, registry, "test-worker", slots=2, poll_seconds=0.1, lease_seconds=lease_seconds)


class FakeSpark:
    """Stands in for the Spark runner: takes a while, counts how many jobs overlap, fails tables it is told to."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.failing = failing
        self.running = 0
        self.most = 0
        self.calls: list[tuple[str, list[str], str]] = []
        self._lock = threading.Lock()

    def run(
        self, warehouse: str, table: list[str], policy_type: str, content: dict[str, Any], *, now_ms: int, job_id: str
    ) -> JobOutcome:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.calls.append((warehouse, table, policy_type))
        time.sleep(0.3)
        with self._lock:
            self.running -= 1
        if table[-1] in self.failing:
            raise RuntimeError(f"CommitFailedException: {table[-1]} changed underneath")
        return JobOutcome(changes={"rewritten-data-files-count": 3, "added-data-files-count": 1}, seconds=0.3)

    def cancel(self, job_id: str) -> None:
        raise AssertionError("no job of this test loses its lease")


class SlowSpark:
    """A job that runs until it is cancelled (or gives up after `seconds` and succeeds), like a long compaction."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.cancelled_job = ""

    def run(
        self, warehouse: str, table: list[str], policy_type: str, content: dict[str, Any], *, now_ms: int, job_id: str
    ) -> JobOutcome:
        self.started.set()
        if self.cancelled.wait(self.seconds):
            raise RuntimeError("SparkException: Job cancelled: part of cancelled job group")
        return JobOutcome(changes={"rewritten-data-files-count": 3}, seconds=self.seconds)

    def cancel(self, job_id: str) -> None:
        self.cancelled_job = job_id
        self.cancelled.set()


async def _table(ctx: Any, warehouse_id: uuid.UUID, name: str) -> uuid.UUID:
    created = await handle_create_table(CreateTable(warehouse_id, Namespace(("ops",)), name, SCHEMA, META), ctx)
    return uuid.UUID(created.metadata["table-uuid"])


async def _schedule(ctx: Any, warehouse_id: uuid.UUID, table_id: uuid.UUID) -> uuid.UUID:
    job = MaintenanceJob(
        policy_type="system.data-compaction",
        policy=encode_policy(decode_policy("system.data-compaction", {"enable": True})),
        inherited_from=InheritedFrom(type="table", id=table_id),
        trigger={"kind": "small-files", "count": 3},
    )
    async with ctx.store.transaction(META) as tx:
        task = NewTask(
            queue=MAINTENANCE_QUEUE,
            warehouse_id=warehouse_id,
            entity_type="table",
            entity_id=table_id,
            payload=encode_job(job),
        )
        return await schedule_task(tx, ctx, task)


async def _events(catalog: Any, task_id: uuid.UUID) -> list[tuple[str, str, dict[str, Any]]]:
    async with catalog.pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT type, extensions->>'actor', data FROM catalog_events"
            " WHERE data->>'job_id' = %s OR data->>'task_id' = %s ORDER BY global_position",
            (str(task_id), str(task_id)),
        )
        rows = await cursor.fetchall()
    return [
        (str(kind).split(".")[-3] + "." + str(kind).split(".")[-2], str(actor), dict(data))
        for kind, actor, data in rows
    ]


def test_jobs_run_two_at_a_time_and_their_outcomes_are_recorded_when_the_worker_runs_once(
    open_catalog: OpenCatalog,
) -> None:
    async def scenario() -> None:
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, Namespace(("ops",)), {}, META), ctx)
            tables = [await _table(ctx, wh, f"t{n}") for n in range(4)]
            failing = await _table(ctx, wh, "contended")
            dropped = await _table(ctx, wh, "gone")
            ok_tasks = [await _schedule(ctx, wh, table_id) for table_id in tables]
            failed_task = await _schedule(ctx, wh, failing)
            skipped_task = await _schedule(ctx, wh, dropped)
            await handle_drop_table(DropTable(wh, Namespace(("ops",)), "gone", False, META), ctx)
            spark = FakeSpark(failing=frozenset({"contended"}))

            ran = await _worker(ctx, spark).run_until_idle()

            assert ran == 6
            assert spark.most == 2, "more jobs ran at once than the parallelism allows"
            assert {tuple(table) for _, table, _ in spark.calls} == {("ops", f"t{n}") for n in range(4)} | {
                ("ops", "contended")
            }
            assert all(warehouse.endswith("/demo") for warehouse, _, _ in spark.calls)

            for task_id in ok_tasks:
                events = await _events(catalog, task_id)
                kinds = [kind for kind, _, _ in events]
                assert kinds == [
                    "task.scheduled",
                    "task.started",
                    "maintenance-job.started",
                    "maintenance-job.finished",
                    "task.succeeded",
                ]
                finished = events[3]
                assert finished[1] == "system:maintenance"
                assert finished[2]["outcome"] == "succeeded"
                assert finished[2]["metrics"]["rewritten-data-files-count"] == 3
                assert events[4][2]["result"]["added-data-files-count"] == 1

            failed = await _events(catalog, failed_task)
            assert [kind for kind, _, _ in failed][-2:] == ["maintenance-job.finished", "task.failed"]
            assert failed[-2][2]["outcome"] == "failed"
            assert "changed underneath" in failed[-2][2]["error"]
            assert failed[-1][2]["retry_at_ms"] is not None, "a failed job is retried with backoff"

            skipped = await _events(catalog, skipped_task)
            assert [kind for kind, _, _ in skipped] == ["task.scheduled", "task.started", "task.succeeded"]
            assert skipped[-1][2]["result"]["outcome"] == "skipped"

    asyncio.run(scenario())


def test_a_maintenance_job_whose_lease_is_taken_away_stops_and_records_no_outcome(open_catalog: OpenCatalog) -> None:
    """Cancelling a running job takes its lease away: the runner stops the Spark job at its next renewal and
    records neither a finished job nor a succeeded task (it once ran on to the end and recorded both)."""

    async def scenario() -> None:
        async with open_catalog() as catalog:
            ctx, wh = catalog.ctx, catalog.warehouse_id
            await handle_create_namespace(CreateNamespace(wh, Namespace(("ops",)), {}, META), ctx)
            task_id = await _schedule(ctx, wh, await _table(ctx, wh, "big"))
            spark = SlowSpark(seconds=8.0)
            worker = _worker(ctx, spark, lease_seconds=1.5)  # renewed every 0.5 s
            task = await claim_task(ctx, [MAINTENANCE], worker.name, worker.lease_seconds)
            assert task is not None
            assert task.task_id == task_id
            running = asyncio.create_task(worker.run_task(task))
            assert await asyncio.to_thread(spark.started.wait, 5), "the job never started"
            await cancel_task(ctx, task_id, META)

            await asyncio.wait_for(running, 5)  # well before the job's 8 s: it was stopped, not waited for

            assert spark.cancelled.is_set(), "the Spark job was not cancelled when its lease was lost"
            assert spark.cancelled_job.startswith(str(task_id))
            kinds = [kind for kind, _, _ in await _events(catalog, task_id)]
            assert kinds == ["task.scheduled", "task.started", "maintenance-job.started", "task.cancelled"]

    asyncio.run(scenario())
