"""Maintenance policies, health and the scheduler step on a real PostgreSQL: inheritance down the tree, jobs
queued once per table and type, counters reset by a finished job, and the read models rebuilt from the log."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from catalog_es.errors import BadRequestError, NoSuchPolicyError, NoSuchTableError
from catalog_es.events.maintenance import MaintenanceJobFinished, MaintenanceJobStarted
from catalog_es.identifiers import Namespace
from catalog_es.maintenance.jobs import MAINTENANCE_ACTOR, MAINTENANCE_QUEUE, decode_job
from catalog_es.maintenance.triggers import nearest_policies
from catalog_es.store.eventstore import EventMetadata
from commands.commit_table import CommitTable, handle_commit_table
from commands.create_table import CreateTable, handle_create_table
from commands.maintenance_policies import RemovePolicy, SetPolicy, handle_remove_policy, handle_set_policy
from commands.maintenance_schedule import schedule_due_jobs
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.tasks import claim_task, complete_task
from projections.maintenance.queries import MaintenanceReadModel
from projections.registry import MAINTENANCE_HEALTH, MAINTENANCE_POLICIES
from projections.verify import verify_projection

META = EventMetadata(actor="admin")
SYSTEM = EventMetadata(actor=MAINTENANCE_ACTOR)
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
STATE = MaintenanceReadModel()


async def _namespace_id(catalog, namespace):
    async with catalog.pool.connection() as conn:
        return (await catalog.ctx.state.namespace(conn, catalog.warehouse_id, namespace)).id


async def _append(catalog, namespace, name, snapshot_id, parent, location):
    """One small append as a writer commits it: 1 file of 2 kB."""
    snapshot = {
        "snapshot-id": snapshot_id,
        "timestamp-ms": 1_700_000_000_000 + snapshot_id,
        "sequence-number": snapshot_id,
        "summary": {
            "operation": "append",
            "added-data-files": "1",
            "added-files-size": "2000",
            "added-records": "10",
            "total-data-files": str(snapshot_id),
            "total-records": str(10 * snapshot_id),
            "total-files-size": str(2000 * snapshot_id),
        },
        "manifest-list": f"{location}/metadata/snap-{snapshot_id}.avro",
        "schema-id": 0,
    }
    if parent is not None:
        snapshot["parent-snapshot-id"] = parent
    updates = [
        {"action": "add-snapshot", "snapshot": snapshot},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id},
    ]
    await handle_commit_table(CommitTable(catalog.warehouse_id, namespace, name, [], updates, META), catalog.ctx)


async def _set(catalog, kind, object_id, policy_type, body):
    command = SetPolicy(
        object_kind=kind,
        object_id=object_id,
        warehouse_id=catalog.warehouse_id,
        policy_type=policy_type,
        content=body,
        metadata=META,
    )
    return await handle_set_policy(command, catalog.ctx, STATE)


async def _effective(catalog, table_id):
    async with catalog.pool.connection() as conn:
        declared = await STATE.declared_for_tables(conn, [table_id])
    return {p.policy_type: p for p in nearest_policies(declared[table_id])}


def test_a_namespace_policy_applies_to_a_table_created_later_when_inherited(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            wh, ctx = catalog.warehouse_id, catalog.ctx
            parent, child = Namespace(("lake",)), Namespace(("lake", "raw"))
            for namespace in (parent, child):
                await handle_create_namespace(CreateNamespace(wh, namespace, {}, META), ctx)
            parent_id, child_id = await _namespace_id(catalog, parent), await _namespace_id(catalog, child)
            await _set(catalog, "warehouse", wh, "system.snapshot-expiry", b'{"enable": true}')
            await _set(catalog, "namespace", parent_id, "system.data-compaction", b'{"enable": true}')
            await _set(
                catalog, "namespace", child_id, "system.data-compaction", b'{"enable": true, "min-input-files": 3}'
            )
            created = await handle_create_table(CreateTable(wh, child, "events", SCHEMA, META), ctx)
            table_id = uuid.UUID(created.metadata["table-uuid"])
            inherited = await _effective(catalog, table_id)

            await _set(catalog, "table", table_id, "system.data-compaction", b'{"enable": false}')
            overridden = await _effective(catalog, table_id)
            await handle_remove_policy(
                RemovePolicy(
                    object_kind="table",
                    object_id=table_id,
                    warehouse_id=wh,
                    policy_type="system.data-compaction",
                    metadata=META,
                ),
                ctx,
                STATE,
            )
            restored = await _effective(catalog, table_id)
            with pytest.raises(NoSuchPolicyError):
                await handle_remove_policy(
                    RemovePolicy(
                        object_kind="table",
                        object_id=table_id,
                        warehouse_id=wh,
                        policy_type="system.data-compaction",
                        metadata=META,
                    ),
                    ctx,
                    STATE,
                )
            with pytest.raises(BadRequestError, match="min-input-files"):
                await _set(
                    catalog, "table", table_id, "system.data-compaction", b'{"enable": true, "min-input-files": -1}'
                )
            with pytest.raises(NoSuchTableError):
                await _set(catalog, "table", uuid.uuid4(), "system.data-compaction", b'{"enable": true}')
            head = await catalog.store.head()
            async with catalog.pool.connection() as conn:
                verification = await verify_projection(conn, MAINTENANCE_POLICIES)
            return child_id, wh, table_id, inherited, overridden, restored, verification, head

    child_id, wh, table_id, inherited, overridden, restored, verification, head = asyncio.run(scenario())
    assert {t: (p.inherited_from.type, p.inherited_from.id) for t, p in inherited.items()} == {
        "system.data-compaction": ("namespace", child_id),
        "system.snapshot-expiry": ("warehouse", wh),
    }
    assert inherited["system.data-compaction"].content.min_input_files == 3
    assert overridden["system.data-compaction"].inherited_from.id == table_id
    assert overridden["system.data-compaction"].content.enable is False
    assert restored["system.data-compaction"].inherited_from.id == child_id
    assert verification.position == head
    assert verification.identical, verification.diffs


def test_jobs_are_queued_once_and_a_finished_job_resets_the_trigger_when_the_scheduler_runs(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            wh, ctx = catalog.warehouse_id, catalog.ctx
            namespace = Namespace(("ops",))
            await handle_create_namespace(CreateNamespace(wh, namespace, {}, META), ctx)
            await _set(
                catalog,
                "namespace",
                await _namespace_id(catalog, namespace),
                "system.data-compaction",
                b'{"enable": true, "min-input-files": 5}',
            )
            created = await handle_create_table(CreateTable(wh, namespace, "clicks", SCHEMA, META), ctx)
            table_id, location = uuid.UUID(created.metadata["table-uuid"]), created.metadata["location"]
            for n in range(1, 5):
                await _append(catalog, namespace, "clicks", n, n - 1 if n > 1 else None, location)
            before_due = await schedule_due_jobs(ctx, STATE)
            await _append(catalog, namespace, "clicks", 5, 4, location)
            first = await schedule_due_jobs(ctx, STATE)
            again = await schedule_due_jobs(ctx, STATE)  # the job is still queued: not twice

            task = await claim_task(ctx, [MAINTENANCE_QUEUE], "test-worker", 30)
            job = decode_job(task.payload)
            started = MaintenanceJobStarted(
                table_id=table_id,
                warehouse_id=wh,
                job_id=task.task_id,
                policy_type=job.policy_type,
                attempt=task.attempt,
                trigger=job.trigger,
            )
            finished = MaintenanceJobFinished(
                table_id=table_id,
                warehouse_id=wh,
                job_id=task.task_id,
                policy_type=job.policy_type,
                attempt=task.attempt,
                outcome="succeeded",
                metrics={"rewritten-data-files-count": 5},
            )
            for event in (started, finished):
                async with ctx.store.transaction(SYSTEM) as tx:
                    await tx.append(event, expected_version=await tx.stream_version(f"maintenance-{table_id}"))
            await complete_task(ctx, task, {"rewritten-data-files-count": 5})
            after_success = await schedule_due_jobs(ctx, STATE)
            async with catalog.pool.connection() as conn:
                health = await STATE.health(conn, table_id)
                verification = await verify_projection(conn, MAINTENANCE_HEALTH)
                cursor = await conn.execute(
                    "SELECT extensions->>'actor' FROM catalog_events WHERE type = 'io.catalog-es.task.scheduled.v1'"
                )
                actors = [row[0] for row in await cursor.fetchall()]
            return table_id, before_due, first, again, job, task, health, after_success, verification, actors

    table_id, before_due, first, again, job, task, health, after_success, verification, actors = asyncio.run(scenario())
    assert before_due == []
    assert [(s.table_id, s.job.policy_type) for s in first] == [(table_id, "system.data-compaction")]
    assert first[0].job.trigger["kind"] == "small-files"
    assert first[0].job.trigger["count"] == 5
    assert first[0].job.inherited_from.type == "namespace"
    assert again == []
    assert task.task_id == first[0].task_id
    assert task.entity_type == "table"
    assert task.entity_id == table_id
    assert job == first[0].job
    assert actors == [MAINTENANCE_ACTOR]
    assert after_success == []
    assert health.commits_since("system.data-compaction") == 0
    assert health.last_runs["system.data-compaction"].outcome == "succeeded"
    assert health.last_runs["system.data-compaction"].metrics == {"rewritten-data-files-count": 5}
    assert (health.snapshot_count, health.data_files, health.commits) == (5, 5, 5)
    assert verification.identical, verification.diffs
