"""The permissions read model, given events: inheritance, ownership of what one creates, nested roles,
managed access, revocation, user deletion, and renames that leave the old namespace's grants behind."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime

import psycopg
import pytest
from typer.testing import CliRunner

from api.cli import cli as cli_app
from catalog_es.errors import AlreadyExistsError
from catalog_es.events import TableCreated
from catalog_es.identifiers import Namespace
from catalog_es.store.eventstore import EventMetadata
from commands.create_table import CreateTable, handle_create_table
from commands.namespaces import CreateNamespace, handle_create_namespace
from commands.permissions import (
    ChangeAssignments,
    SetManagedAccess,
    handle_change_assignments,
    handle_set_managed_access,
)
from commands.roles import CreateRole, handle_create_role
from commands.tabular_lifecycle import RenameTable, handle_rename_table
from commands.users import DeleteUser, ProvisionUser, handle_delete_user, handle_provision_user
from projections.permissions import queries as q
from projections.permissions.as_of import access_as_of
from projections.rebuild import rebuild_projection
from projections.registry import CATALOG, PERMISSIONS

ALICE = EventMetadata(actor="oidc~alice")
ADMIN = EventMetadata(actor="oidc~admin")
SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
PROJECTORS = (CATALOG.project, PERMISSIONS.project)


async def _grant(catalog, kind, object_id, principal, privilege, *, revoke=False):
    change = [(principal, privilege)]
    command = ChangeAssignments(kind, object_id, [] if revoke else change, change if revoke else [], ADMIN)
    return await handle_change_assignments(command, catalog.ctx)


async def _setup(catalog):
    for user in ("oidc~alice", "oidc~bob"):
        await handle_provision_user(
            ProvisionUser(user, user, None, "application", "config-call-creation", EventMetadata(actor=user)),
            catalog.ctx,
        )
    for parts in (("a",), ("b",)):
        await handle_create_namespace(CreateNamespace(catalog.warehouse_id, Namespace(parts), {}, ALICE), catalog.ctx)
    await handle_create_table(CreateTable(catalog.warehouse_id, Namespace(("a",)), "t", SCHEMA, ALICE), catalog.ctx)
    async with catalog.store.connection() as conn:
        ns_a = (await catalog.ctx.state.namespace(conn, catalog.warehouse_id, Namespace(("a",)))).id
        ns_b = (await catalog.ctx.state.namespace(conn, catalog.warehouse_id, Namespace(("b",)))).id
        table = (await catalog.ctx.state.table(conn, catalog.warehouse_id, Namespace(("a",)), "t")).id
    return ns_a, ns_b, table


def test_creator_owns_and_grants_inherit_down_the_hierarchy_when_given_on_a_namespace(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            ns_a, _, table = await _setup(catalog)
            async with catalog.store.connection() as conn:
                assert await q.has_privilege(conn, "oidc~alice", table, "modify")
                assert await q.has_privilege(conn, "oidc~alice", table, "manage_grants")
                assert not await q.has_privilege(conn, "oidc~bob", table, "describe")
                assert not await q.can_see(conn, "oidc~bob", catalog.warehouse_id)
            assert await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "select") == 1
            assert await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "select") == 0  # no-op: no event
            async with catalog.store.connection() as conn:
                assert await q.has_privilege(conn, "oidc~bob", table, "select")
                assert await q.has_privilege(conn, "oidc~bob", table, "describe")
                assert not await q.has_privilege(conn, "oidc~bob", table, "modify")
                assert await q.can_see(conn, "oidc~bob", catalog.warehouse_id)  # something inside is granted
                assert not await q.has_privilege(conn, "oidc~bob", catalog.warehouse_id, "describe")
                visible = await q.visible_child_namespaces(conn, "oidc~bob", catalog.warehouse_id, None, "", None)
                assert visible == [["a"]]
            await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "select", revoke=True)
            async with catalog.store.connection() as conn:
                assert not await q.has_privilege(conn, "oidc~bob", table, "select")

    asyncio.run(scenario())


def test_renamed_table_leaves_the_old_namespace_grants_behind_when_moved(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            ns_a, ns_b, table = await _setup(catalog)
            await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "modify")
            await _grant(catalog, "table", table, "user:oidc~bob", "describe")
            rename = RenameTable(catalog.warehouse_id, Namespace(("a",)), "t", Namespace(("b",)), "t", ALICE)
            await handle_rename_table(rename, catalog.ctx)
            async with catalog.store.connection() as conn:
                assert not await q.has_privilege(conn, "oidc~bob", table, "modify")  # Lakekeeper #2000
                assert await q.has_privilege(conn, "oidc~bob", table, "describe")  # direct grants travel along
                assert await q.visible_tabular_names(conn, "oidc~bob", "tables", ns_b, "", None) == ["t"]

    asyncio.run(scenario())


def test_nested_role_members_get_the_role_privileges_until_removed(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            _, _, table = await _setup(catalog)
            project = uuid.UUID(int=0)
            readers = await handle_create_role(CreateRole(project, "readers", None, ADMIN), catalog.ctx)
            team = await handle_create_role(CreateRole(project, "team", None, ADMIN), catalog.ctx)
            await _grant(catalog, "table", table, f"role:{readers}", "select")
            await _grant(catalog, "role", readers, f"role:{team}", "assignee")  # team members are readers
            await _grant(catalog, "role", team, "user:oidc~bob", "assignee")
            async with catalog.store.connection() as conn:
                assert await q.has_privilege(conn, "oidc~bob", table, "select")
            await _grant(catalog, "role", team, "user:oidc~bob", "assignee", revoke=True)
            async with catalog.store.connection() as conn:
                assert not await q.has_privilege(conn, "oidc~bob", table, "select")

    asyncio.run(scenario())


def test_owners_below_lose_grant_rights_but_keep_data_rights_when_managed_access_is_on(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            _, _, table = await _setup(catalog)
            await handle_set_managed_access(
                SetManagedAccess("warehouse", catalog.warehouse_id, True, ADMIN), catalog.ctx
            )
            async with catalog.store.connection() as conn:
                assert await q.has_privilege(conn, "oidc~alice", table, "modify")
                assert not await q.has_privilege(conn, "oidc~alice", table, "manage_grants")
                assert await q.managed_access(conn, table) == (False, True)
            await handle_set_managed_access(
                SetManagedAccess("warehouse", catalog.warehouse_id, False, ADMIN), catalog.ctx
            )
            async with catalog.store.connection() as conn:
                assert await q.has_privilege(conn, "oidc~alice", table, "manage_grants")

    asyncio.run(scenario())


def test_deleting_a_user_removes_their_grants_when_deleted(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            _, _, table = await _setup(catalog)
            await _grant(catalog, "table", table, "user:oidc~bob", "select")
            await handle_delete_user(DeleteUser("oidc~bob", ADMIN), catalog.ctx)
            async with catalog.store.connection() as conn:
                assert await q.user(conn, "oidc~bob") is None
                assert ("user:oidc~bob", "select") not in await q.assignments(conn, table)

    asyncio.run(scenario())


def test_access_as_of_names_the_granting_events_when_asked_about_the_past(open_catalog, migrated_dsn):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            ns_a, _, table = await _setup(catalog)
            await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "select")
            granted_at = datetime.now(UTC)
            await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "select", revoke=True)
            async with catalog.store.connection() as conn:
                then = await access_as_of(conn, table, granted_at)
                now = await access_as_of(conn, table, datetime.now(UTC))
            return table, ns_a, granted_at, then, now

    table, ns_a, granted_at, then, now = asyncio.run(scenario())
    by_user = {entry.user: entry for entry in then.access}
    assert by_user["oidc~bob"].privileges == ["describe", "select"]
    [reason] = by_user["oidc~bob"].because
    assert (reason.privilege, reason.object_id, reason.event.type) == (
        "select",
        ns_a,
        "io.catalog-es.privilege.granted.v1",
    )
    assert reason.event.actor == "oidc~admin"
    assert "modify" in by_user["oidc~alice"].privileges
    assert by_user["oidc~alice"].because[0].event.type == "io.catalog-es.table.created.v1"  # the creator owns it
    assert "oidc~bob" not in {entry.user for entry in now.access}

    result = CliRunner().invoke(
        cli_app,
        ["audit", "access", "--object", f"table:{table}", "--as-of", granted_at.isoformat(), "--json"],
        env={"CATALOG_ES__PG_DSN": migrated_dsn},
    )
    assert result.exit_code == 0, result.output
    assert {entry["user"] for entry in json.loads(result.output)["access"]} >= {"oidc~alice", "oidc~bob"}


def test_each_creator_owns_its_table_when_many_are_created_in_one_transaction(open_catalog):
    async def scenario():
        async with open_catalog() as catalog:
            ns_a, _, _ = await _setup(catalog)
            ids = [uuid.uuid4() for _ in range(3)]
            async with catalog.store.transaction(EventMetadata(actor="oidc~bob")) as tx:
                for index, table_id in enumerate(ids):
                    location = f"file:///many/t{index}"
                    event = TableCreated(
                        table_id=table_id,
                        warehouse_id=catalog.warehouse_id,
                        namespace_id=ns_a,
                        name=f"many{index}",
                        metadata_location=f"{location}/metadata/0.json",
                        metadata={"location": location},
                    )
                    await tx.append(event, expected_version=0)
            async with catalog.store.connection() as conn:
                return [await q.has_privilege(conn, "oidc~bob", table_id, "modify") for table_id in ids]

    assert asyncio.run(scenario()) == [True, True, True]


def test_rebuilt_permissions_answer_like_the_live_ones_when_rebuilt_from_the_log(open_catalog, migrated_dsn):
    async def scenario():
        async with open_catalog() as catalog:
            ns_a, _, table = await _setup(catalog)
            await _grant(catalog, "namespace", ns_a, "user:oidc~bob", "select")
            async with await psycopg.AsyncConnection.connect(migrated_dsn, autocommit=True) as conn:
                await rebuild_projection(conn, PERMISSIONS)
            async with catalog.store.connection() as conn:
                return [
                    await q.has_privilege(conn, "oidc~bob", table, "select"),
                    await q.has_privilege(conn, "oidc~bob", table, "modify"),
                    await q.has_privilege(conn, "oidc~alice", table, "ownership"),
                ]

    assert asyncio.run(scenario()) == [True, False, True]


def test_change_assignments_records_only_real_changes_when_the_handler_reads_what_is_held(open_catalog):
    async def scenario():
        async with open_catalog(projectors=PROJECTORS) as catalog:
            _, _, table = await _setup(catalog)
            counts = [
                await _grant(catalog, "table", table, "user:oidc~bob", "select"),
                await _grant(catalog, "table", table, "user:oidc~bob", "select"),
                await _grant(catalog, "table", table, "user:oidc~bob", "select", revoke=True),
                await _grant(catalog, "table", table, "user:oidc~bob", "select", revoke=True),
            ]
            project = uuid.uuid4()
            await handle_create_role(CreateRole(project, "Readers", None, ADMIN), catalog.ctx)
            with pytest.raises(AlreadyExistsError):
                await handle_create_role(CreateRole(project, "readers", None, ADMIN), catalog.ctx)
            return counts

    assert asyncio.run(scenario()) == [1, 0, 1, 0]
