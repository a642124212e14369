"""deploy/grafana: the example dashboard queries only series that /metrics exposes, each as its type allows."""

from __future__ import annotations

import json
import re
from typing import Any

from api.http_metrics import HttpMetrics
from api.metrics import projector_text, prometheus_text
from projections.checkpoints import ProjectorStatus
from projections.relay.metrics import RelayMetrics
from tests.deploy.tools import DEPLOY

DASHBOARD = DEPLOY / "grafana" / "catalog-es-dashboard.json"


def _exposed() -> dict[str, str]:
    """Every series name and type /metrics (API and relay) writes, read from the exposition text itself."""
    status = ProjectorStatus(projector="p", mode="process", checkpoint=1, head=2, lag_positions=1, lag_seconds=0.5)
    text = prometheus_text(RelayMetrics(relay="r")) + projector_text([status]) + HttpMetrics().text()
    exposed = {}
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.MULTILINE):
        # A histogram is queried through its series: buckets (quantiles), sum and count (the mean).
        suffixes = ("_bucket", "_sum", "_count") if kind == "histogram" else ("",)
        exposed.update({name + suffix: kind for suffix in suffixes})
    return exposed


def _queries() -> list[tuple[str, str]]:
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel.get("targets", [])]


def test_every_series_the_dashboard_queries_is_exposed() -> None:
    exposed = _exposed()
    queried = {name for _, expr in _queries() for name in re.findall(r"\bcatalog_es_\w+", expr)}

    assert queried
    assert queried - set(exposed) == set()


def test_every_exposed_series_is_on_the_dashboard() -> None:
    queried = {name for _, expr in _queries() for name in re.findall(r"\bcatalog_es_\w+", expr)}

    assert set(_exposed()) - queried == set()


def test_counters_are_read_through_rate_or_increase_and_gauges_never_are() -> None:
    exposed = _exposed()
    for title, expr in _queries():
        for name in re.findall(r"\bcatalog_es_\w+", expr):
            windowed = re.search(r"(?:rate|increase|irate)\(\s*" + name, expr) is not None
            assert windowed == (exposed[name] in {"counter", "histogram"}), (title, expr)


def test_panels_have_unique_ids_and_use_the_datasource_variable() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    ids = [panel["id"] for panel in dashboard["panels"]]

    assert len(ids) == len(set(ids))
    assert {variable["name"] for variable in dashboard["templating"]["list"]} >= {"datasource"}
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
