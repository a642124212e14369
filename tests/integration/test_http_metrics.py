"""/metrics counts and times requests by route template and status, shows the pool; a 4xx is logged with its message."""

from __future__ import annotations

import uuid

from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families
from structlog.testing import capture_logs

from api.app import create_app
from api.settings import load_settings


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_requests_are_counted_and_timed_by_route_and_status_and_the_pool_is_shown(migrated_dsn: str) -> None:
    app = create_app(load_settings({"CATALOG_ES__PG_DSN": migrated_dsn}), migrated_dsn)
    with TestClient(app) as client, capture_logs() as logs:
        for _ in range(3):  # three paths, one route
            client.get(f"/management/v1/warehouse/{uuid.uuid4()}")
        listed = client.get("/management/v1/warehouse")
        samples = _samples(client.get("/metrics").text)

    warehouse = "/management/v1/warehouse/{warehouse_id}"
    missing = (("method", "GET"), ("route", warehouse), ("status", "404"))
    listing = (("method", "GET"), ("route", "/management/v1/warehouse"), ("status", "200"))
    assert listed.status_code == 200
    assert samples[("catalog_es_http_requests_total", missing)] == 3
    assert samples[("catalog_es_http_requests_total", listing)] == 1
    assert samples[("catalog_es_http_request_duration_seconds_count", missing)] == 3
    assert samples[("catalog_es_http_request_duration_seconds_bucket", (("le", "+Inf"), *missing))] == 3
    assert samples[("catalog_es_http_requests_in_flight", ())] == 1  # the scrape itself
    assert samples[("catalog_es_db_pool_connections", ())] >= 1
    assert samples[("catalog_es_db_pool_connections_max", ())] == 16
    assert samples[("catalog_es_db_pool_requests_total", ())] >= 4
    rejected = [entry for entry in logs if entry["event"] == "request.rejected"]
    assert [entry["status"] for entry in rejected] == [404, 404, 404]
    assert rejected[0]["error_type"] == "NoSuchWarehouseException"
    assert "does not exist" in rejected[0]["message"]
    assert rejected[0]["route"] == warehouse


def test_a_body_that_is_not_json_is_logged_and_counted_as_the_400_it_is_answered_when_form_or_multipart(
    migrated_dsn: str,
) -> None:
    app = create_app(load_settings({"CATALOG_ES__PG_DSN": migrated_dsn}), migrated_dsn)
    with TestClient(app) as client, capture_logs() as logs:
        form = client.post("/management/v1/project", data={"project-name": "x"})
        multipart = client.post("/management/v1/project", files={"project-name": b"x"})
        samples = _samples(client.get("/metrics").text)

    for response in (form, multipart):
        assert response.status_code == 400, response.text
        assert response.json()["error"]["type"] == "BadRequestException"
        assert "not valid JSON" in response.json()["error"]["message"]
        assert response.headers["x-request-id"]
    requests = [entry for entry in logs if entry["event"] == "request" and entry["method"] == "POST"]
    assert [entry["status"] for entry in requests] == [400, 400]
    rejected = [entry for entry in logs if entry["event"] == "request.rejected"]
    assert [entry["status"] for entry in rejected] == [400, 400]
    assert "not valid JSON" in rejected[0]["message"]
    bad = (("method", "POST"), ("route", "/management/v1/project"), ("status", "400"))
    assert samples[("catalog_es_http_requests_total", bad)] == 2
