"""NATS settings from the environment, the relay configuration built from them, and the metrics text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from api.metrics import prometheus_text
from api.runtime.nats import nats_url
from api.settings import load_settings
from projections.relay.config import RelayConfig
from projections.relay.metrics import RelayMetrics


def test_nats_settings_default_to_embedded_binary_mode_when_nothing_is_set():
    nats = load_settings({}).nats
    assert nats == RelayConfig()
    assert (nats.url, nats.enabled, nats.content_mode, nats.lakekeeper_compat) == (None, True, "binary", False)


def test_nats_settings_read_nested_variables_when_set():
    nats = load_settings(
        {
            "CATALOG_ES__NATS__URL": "nats://10.0.0.5:4222",
            "CATALOG_ES__NATS__CONTENT_MODE": "structured",
            "CATALOG_ES__NATS__LAKEKEEPER_COMPAT": "true",
            "CATALOG_ES__NATS__DUPLICATE_WINDOW_SECONDS": "300",
        }
    ).nats
    assert nats.url == "nats://10.0.0.5:4222"
    assert nats.content_mode == "structured"
    assert nats.lakekeeper_compat is True
    assert nats.duplicate_window_seconds == 300.0


def test_nats_settings_raise_when_content_mode_is_unknown():
    with pytest.raises(msgspec.ValidationError, match="content_mode"):
        load_settings({"CATALOG_ES__NATS__CONTENT_MODE": "batch"})


def test_nats_is_off_when_the_database_is_external_and_no_url_is_set():
    assert nats_url(load_settings({"CATALOG_ES__PG_DSN": "postgresql://db/c"}), start=True) == (None, None)


def test_nats_is_off_when_disabled_even_with_a_url():
    environ = {"CATALOG_ES__NATS__URL": "nats://x:1", "CATALOG_ES__NATS__ENABLED": "false"}
    assert nats_url(load_settings(environ), start=True) == (None, None)


def test_external_url_is_used_as_is_when_set():
    assert nats_url(load_settings({"CATALOG_ES__NATS__URL": "nats://x:1"}), start=True) == ("nats://x:1", None)


def test_stream_captures_the_lakekeeper_subject_when_it_lies_outside_the_prefix():
    nats = RelayConfig(lakekeeper_compat=True, lakekeeper_subject="lakekeeper.events")
    assert nats.at("nats://x:1").stream_options().subjects == ["catalog.>", "lakekeeper.events"]
    assert RelayConfig(lakekeeper_compat=True).at("nats://x:1").stream_options().subjects == ["catalog.>"]


def test_prometheus_text_reports_lag_in_positions_and_seconds_when_the_relay_is_behind():
    now = datetime(2025, 1, 1, tzinfo=UTC)
    metrics = RelayMetrics(relay="CATALOG_EVENTS", leader=True, head_position=10)
    metrics.record_published(position=7, messages=7, duplicates=0)
    metrics.head_position = 10
    metrics.oldest_unpublished_time = now - timedelta(seconds=2.5)
    lines = prometheus_text(metrics, now).splitlines()
    assert 'catalog_es_relay_lag_positions{relay="CATALOG_EVENTS"} 3' in lines
    assert 'catalog_es_relay_lag_seconds{relay="CATALOG_EVENTS"} 2.5' in lines
    assert 'catalog_es_relay_published_total{relay="CATALOG_EVENTS"} 7' in lines
    assert 'catalog_es_relay_leader{relay="CATALOG_EVENTS"} 1' in lines
    assert "# TYPE catalog_es_relay_errors_total counter" in lines


def test_prometheus_text_is_empty_when_no_relay_runs_in_the_process():
    assert prometheus_text(None) == ""


def test_dedup_window_is_capped_by_retention_when_max_age_is_shorter():
    options = RelayConfig(max_age_seconds=60).at("nats://x:1").stream_options()
    assert (options.duplicate_window_seconds, options.max_age_seconds) == (60, 60)
    assert RelayConfig().at("nats://x:1").stream_options().duplicate_window_seconds == 120
