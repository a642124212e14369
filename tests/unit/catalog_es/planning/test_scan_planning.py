"""Scan planning's pure parts: read policies combine and refuse restrictively, the plan cache stays bounded."""

from __future__ import annotations

import uuid

import pytest
from pyiceberg.expressions import AlwaysTrue, And, EqualTo, GreaterThan
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType, StructType

from catalog_es.errors import BadRequestError, NotAuthorizedError
from catalog_es.planning.cache import PlanCache
from catalog_es.planning.planner import PlannedScan
from catalog_es.planning.policy import ReadPolicy
from catalog_es.planning.request import ScanRequest

SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "dept", StringType()),
    NestedField(3, "salary", LongType()),
    NestedField(4, "address", StructType(NestedField(5, "city", StringType()))),
)
ENG = {"type": "eq", "term": "dept", "value": "eng"}


def test_policies_combine_restrictively_when_a_user_has_several() -> None:
    policy = ReadPolicy.combined(
        [(ENG, ["id", "dept", "salary"]), ({"type": "gt", "term": "id", "value": 5}, ["id", "dept"])]
    )
    assert policy is not None
    assert policy.columns == frozenset({"id", "dept"})
    assert policy.row_filter == And(EqualTo("dept", "eng"), GreaterThan("id", 5))
    assert ReadPolicy.combined([]) is None


def test_policy_refuses_hidden_columns_when_selected_filtered_or_implied() -> None:
    policy = ReadPolicy.combined([(ENG, ["id", "dept", "address"])])
    assert policy is not None
    with pytest.raises(NotAuthorizedError, match="salary"):
        policy.enforce(SCHEMA, ["id", "salary"], AlwaysTrue(), True)
    with pytest.raises(NotAuthorizedError, match="all columns"):
        policy.enforce(SCHEMA, None, AlwaysTrue(), True)
    with pytest.raises(NotAuthorizedError, match="filter on"):
        policy.enforce(SCHEMA, ["id"], GreaterThan("salary", 10), True)
    with pytest.raises(BadRequestError):
        policy.enforce(SCHEMA, ["nope"], AlwaysTrue(), True)
    selected, row_filter = policy.enforce(SCHEMA, ["id", "address.city"], GreaterThan("id", 1), True)
    assert selected == ["id", "address.city"]  # a nested field of an allowed column is allowed
    assert row_filter == And(GreaterThan("id", 1), EqualTo("dept", "eng"))


def test_policy_fingerprint_differs_when_rows_or_columns_differ() -> None:
    prints = [ReadPolicy.combined([(ENG, columns)]) for columns in (["id"], ["id", "dept"], ["id"])]
    one, other, same = (policy.fingerprint() for policy in prints if policy is not None)
    assert one != other
    assert one == same


def test_request_key_is_one_spelling_when_the_filter_is_spelled_differently() -> None:
    terse = ScanRequest(filter={"type": "eq", "term": "dept", "value": "eng"}, min_rows_requested=10)
    reordered = ScanRequest(filter={"value": "eng", "term": "dept", "type": "eq"})
    assert terse.key() == reordered.key()
    with pytest.raises(BadRequestError):
        ScanRequest(filter={"type": "frobnicate"}).validated()
    with pytest.raises(BadRequestError):
        ScanRequest(snapshot_id=1, start_snapshot_id=0, end_snapshot_id=2).validated()


def test_plan_cache_evicts_least_recently_used_when_over_its_bytes() -> None:
    cache = PlanCache(max_bytes=250)
    table = uuid.uuid4()
    plans = {name: PlannedScan((b"x" * 100,), 1, 0) for name in "abc"}
    cache.put((table, b"a", ""), plans["a"])
    cache.put((table, b"b", ""), plans["b"])
    assert cache.get((table, b"a", "")) is plans["a"]  # a is now the most recent
    cache.put((table, b"c", ""), plans["c"])
    assert cache.get((table, b"b", "")) is None
    assert cache.get((table, b"a", "")) is plans["a"]
    cache.put((table, b"huge", ""), PlannedScan((b"y" * 1000,), 1, 0))  # larger than the cache: not kept
    assert cache.get((table, b"huge", "")) is None
    assert cache.get((table, b"c", "")) is plans["c"]
