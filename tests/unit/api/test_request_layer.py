"""The one request layer: request id echoed, answers counted by route and status (its own 400s too), statistics kept."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from litestar import Litestar, get, post
from litestar.params import FromPath, JSONBody
from litestar.testing import TestClient

from api.endpoint_statistics import EndpointStatistics
from api.http_metrics import HttpMetrics
from api.request_layer import RequestLayer, new_request_id

WAREHOUSE = uuid.UUID(int=7)


@get("/catalog/v1/{prefix:str}/things")
async def things(prefix: FromPath[str]) -> dict[str, str]:
    return {"prefix": prefix}


@post("/catalog/v1/{prefix:str}/things", status_code=200)
async def add_thing(prefix: FromPath[str], data: JSONBody[dict[str, int]]) -> dict[str, int]:
    return data


def _app() -> tuple[Litestar, HttpMetrics, EndpointStatistics]:
    metrics = HttpMetrics()
    statistics = EndpointStatistics(clock=lambda: datetime(2026, 1, 1, 10, tzinfo=UTC))
    app = Litestar([things, add_thing], middleware=[RequestLayer(metrics, statistics)])
    return app, metrics, statistics


def _count(metrics: HttpMetrics, method: str, status: str) -> float:
    route = "/catalog/v1/{prefix}/things"
    value = metrics.registry.get_sample_value(
        "catalog_es_http_requests_total", {"method": method, "route": route, "status": status}
    )
    return value or 0.0


def test_the_request_id_is_the_callers_or_a_new_one_and_is_echoed() -> None:
    app, _, _ = _app()
    with TestClient(app) as client:
        given = client.get(f"/catalog/v1/{WAREHOUSE}/things", headers={"x-request-id": "abc"})
        made = client.get(f"/catalog/v1/{WAREHOUSE}/things")

    assert given.headers["x-request-id"] == "abc"
    assert uuid.UUID(made.headers["x-request-id"])


def test_answers_are_counted_by_route_and_status_and_a_refused_body_is_answered_400_and_counted() -> None:
    app, metrics, statistics = _app()
    with TestClient(app) as client:
        assert client.get(f"/catalog/v1/{WAREHOUSE}/things").status_code == 200
        assert client.post(f"/catalog/v1/{WAREHOUSE}/things", json={"a": 1}).json() == {"a": 1}
        refused = client.post(f"/catalog/v1/{WAREHOUSE}/things", content=b"{not json", headers={"x-request-id": "r-1"})

    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "BadRequestException"
    assert refused.headers["x-request-id"] == "r-1"
    assert (_count(metrics, "GET", "200"), _count(metrics, "POST", "200"), _count(metrics, "POST", "400")) == (1, 1, 1)
    assert metrics.registry.get_sample_value("catalog_es_http_requests_in_flight") == 0
    counted = {(key[1], key[2], key[3]): tally.count for key, tally in statistics._pending.items()}
    route = "/catalog/v1/{prefix}/things"
    assert counted == {
        (WAREHOUSE, f"GET {route}", 200): 1,
        (WAREHOUSE, f"POST {route}", 200): 1,
        (WAREHOUSE, f"POST {route}", 400): 1,
    }


def test_a_made_request_id_is_a_random_version_4_uuid_as_uuid4_spells_it():
    made = [new_request_id() for _ in range(2_000)]
    parsed = [uuid.UUID(request_id) for request_id in made]
    assert [str(u) for u in parsed] == made
    assert {u.version for u in parsed} == {4}
    assert {u.variant for u in parsed} == {uuid.RFC_4122}
    assert len(set(made)) == len(made)
    assert {request_id[19] for request_id in made} == set("89ab")  # every variant digit occurs
