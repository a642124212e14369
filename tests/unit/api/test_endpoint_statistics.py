"""Endpoint statistics without a database: what a call is counted as, and the window's ISO 8601 intervals."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from api.endpoint_statistics import EndpointStatistics
from api.management.endpoint_statistics import _interval
from catalog_es.errors import BadRequestError

WAREHOUSE = uuid.UUID(int=5)
PROJECT = uuid.UUID(int=6)


def _scope(template: str, params: dict[str, object], headers: list[tuple[bytes, bytes]] | None = None) -> dict:
    return {"method": "POST", "path_template": template, "path_params": params, "headers": headers or []}


def test_calls_are_counted_by_route_status_warehouse_project_and_hour_and_others_are_not():
    times = iter([datetime(2026, 1, 1, 10, 5, tzinfo=UTC), datetime(2026, 1, 1, 10, 50, tzinfo=UTC)] * 3)
    statistics = EndpointStatistics(clock=lambda: next(times))
    tables = "/catalog/v1/{prefix}/namespaces/{namespace}/tables"
    statistics.record(_scope(tables, {"prefix": f"{WAREHOUSE}", "namespace": "db"}), 200)
    statistics.record(_scope(tables, {"prefix": f"{WAREHOUSE}@12", "namespace": "db"}), 200)  # an as-of prefix
    statistics.record(_scope("/management/v1/warehouse", {}, [(b"x-project-id", str(PROJECT).encode())]), 201)
    statistics.record(_scope("/health", {}), 200)
    statistics.record(_scope("", {}), 404)  # no route matched

    pending = statistics._pending  # what the next flush adds
    hour = datetime(2026, 1, 1, 10, tzinfo=UTC)
    assert set(pending) == {
        (uuid.UUID(int=0), WAREHOUSE, f"POST {tables}", 200, hour),
        (PROJECT, None, "POST /management/v1/warehouse", 201, hour),
    }
    tally = pending[(uuid.UUID(int=0), WAREHOUSE, f"POST {tables}", 200, hour)]
    assert (tally.count, tally.first_at.minute, tally.last_at.minute) == (2, 5, 50)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT1H", timedelta(hours=1)),
        ("P1D", timedelta(days=1)),
        ("P2W", timedelta(weeks=2)),
        ("P1DT30M", timedelta(days=1, minutes=30)),
    ],
)
def test_interval_accepts_iso_durations_of_fixed_length(text, expected):
    assert _interval(text) == expected


@pytest.mark.parametrize("text", ["P1M", "P1Y", "PT", "P", "1D", "P0D", "P400D", "PT1H "])
def test_interval_refuses_months_years_empty_zero_and_too_long_durations(text):
    with pytest.raises(BadRequestError):
        _interval(text)
