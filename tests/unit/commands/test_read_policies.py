"""Read-policy commands without PostgreSQL (what planning then serves a principal under a policy, and who may
manage policies: tests/e2e/auth/test_read_policies.py)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from fakes import fake_context

from catalog_es.errors import BadRequestError
from catalog_es.events.access import ReadPolicyRemoved, ReadPolicySet
from catalog_es.store.eventstore import EventMetadata
from commands.read_policies import RemoveReadPolicy, SetReadPolicy, handle_remove_read_policy, handle_set_read_policy

META = EventMetadata(actor="tester")
TABLE = uuid.UUID(int=20)
ROLE = f"role:{uuid.UUID(int=7)}"


def _set(row_filter: Any, columns: list[str] | None, principal: str = "user:ana") -> SetReadPolicy:
    return SetReadPolicy(TABLE, principal, row_filter, columns, META)


def test_set_records_the_filter_in_canonical_form_and_each_column_once():
    ctx, store = fake_context()
    spelled = {"type": "in", "term": "id", "values": [3, 1, 1]}
    asyncio.run(handle_set_read_policy(_set(spelled, ["id", "region", "id"], ROLE), ctx))
    assert store.appended == [
        ReadPolicySet(
            table_id=TABLE,
            principal=ROLE,
            row_filter={"type": "in", "term": "id", "literals": [1, 3]},
            columns=["id", "region"],
        )
    ]


def test_set_records_rows_only_or_columns_only_and_replaces_on_the_tables_acl_stream():
    ctx, store = fake_context()
    rows_only = {"type": "eq", "term": "region", "value": "eu"}
    asyncio.run(handle_set_read_policy(_set(rows_only, None), ctx))
    asyncio.run(handle_set_read_policy(_set(None, ["id"]), ctx))
    assert store.appended == [
        ReadPolicySet(table_id=TABLE, principal="user:ana", row_filter=rows_only, columns=None),
        ReadPolicySet(table_id=TABLE, principal="user:ana", row_filter=None, columns=["id"]),
    ]
    assert store.versions == {f"acl-{TABLE}": 2}


@pytest.mark.parametrize(
    ("row_filter", "columns", "principal", "message"),
    [
        (None, ["id"], "group:x", "names a user or a role"),
        (None, ["id"], "user:", "names a user or a role"),
        (None, ["id"], "role:readers", "Not a role id"),
        ({"type": "eq", "term": "region"}, None, "user:ana", "Invalid filter"),
        ("region = 'eu'", None, "user:ana", "Invalid filter"),
        (None, [], "user:ana", "at least one column"),
        (None, ["id", " "], "user:ana", "at least one column"),
        (None, None, "user:ana", "restricts rows"),
    ],
)
def test_set_refuses_a_malformed_policy_and_appends_nothing(row_filter, columns, principal, message):
    ctx, store = fake_context()
    with pytest.raises(BadRequestError, match=message):
        asyncio.run(handle_set_read_policy(_set(row_filter, columns, principal), ctx))
    assert store.appended == []


def test_remove_records_it_on_the_tables_acl_stream_and_refuses_a_malformed_principal():
    ctx, store = fake_context()
    with pytest.raises(BadRequestError):
        asyncio.run(handle_remove_read_policy(RemoveReadPolicy(TABLE, "role:not-a-uuid", META), ctx))
    assert store.appended == []
    asyncio.run(handle_set_read_policy(_set(None, ["id"], ROLE), ctx))
    asyncio.run(handle_remove_read_policy(RemoveReadPolicy(TABLE, ROLE, META), ctx))
    assert store.appended[1:] == [ReadPolicyRemoved(table_id=TABLE, principal=ROLE)]
    assert store.versions == {f"acl-{TABLE}": 2}
