"""Projector lag as Prometheus gauges."""

from api.metrics import projector_text
from projections.checkpoints import ProjectorStatus


def test_prometheus_text_has_projector_lag_gauges_when_projectors_report():
    status = ProjectorStatus("catalog_statistics", "process", checkpoint=7, head=10, lag_positions=3, lag_seconds=1.5)
    lines = projector_text([status]).splitlines()
    assert 'catalog_es_projector_checkpoint_position{projector="catalog_statistics"} 7' in lines
    assert 'catalog_es_projector_lag_positions{projector="catalog_statistics"} 3' in lines
    assert 'catalog_es_projector_lag_seconds{projector="catalog_statistics"} 1.5' in lines
    assert "# TYPE catalog_es_projector_head_position gauge" in lines


def test_prometheus_text_has_no_projector_lines_when_none_report():
    assert projector_text([]) == ""
