"""The schema steps' apply order is pinned: databases in the field applied them in this order, so none may move."""

from __future__ import annotations

from api.runtime.database import ALL_MIGRATIONS
from projections.registry import PROJECTIONS

# Never reorder, rename or remove a step. A new one goes at the end of its owner's list (a projection's steps also
# build its scratch tables, so they stay together): a database that has the rest applies it last, a new one in
# place, so a step must not depend on a step listed after it.
APPLIED_ORDER = [
    "0001_event_store",
    "0002_idempotency_keys",
    "0004_idempotency_keys_per_caller",
    "0003_storage_secrets",
    "0101_catalog_read_model",
    "0102_views_read_model",
    "0103_management_read_model",
    "0104_deleted_read_model",
    "0105_warehouse_rebase_mode",
    "0106_warehouse_scan_planning",
    "0107_table_document_entries",
    "0301_table_metrics_reports",
    "0201_relay_checkpoint",
    "0401_event_history_indexes",
    "0402_iceberg_events_indexes",
    "0403_iceberg_events_naming_undropped",
    "0801_access_audit_log",
    "0802_access_audit_log_chain",
    "0501_projector_checkpoints",
    "0502_catalog_statistics",
    "0504_catalog_statistics_hourly",
    "0503_tabular_search",
    "0701_permissions_read_model",
    "0702_read_policies",
    "0703_service_principals",
    "0803_catalog_event_chain",
    "1001_maintenance_policies",
    "1002_maintenance_health",
    "0601_protections",
    "0901_task_queue",
    "0902_task_leases",
    "0901_endpoint_statistics",
    "0004_service_principal_secrets",
]


def test_migrations_apply_in_the_order_databases_in_the_field_applied_them() -> None:
    assert [migration.name for migration in ALL_MIGRATIONS] == APPLIED_ORDER


def test_every_projection_step_is_applied_once_in_the_order_the_projection_declares() -> None:
    """A projection's own steps build its scratch tables; the same steps, once each, build the live ones."""
    applied = list(ALL_MIGRATIONS)
    for projection in PROJECTIONS:
        places = [applied.index(migration) for migration in projection.migrations]
        assert places == sorted(places), projection.name
    assert len({migration.name for migration in applied}) == len(applied)
