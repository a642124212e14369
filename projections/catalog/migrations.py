"""The read models' schema steps, applied by `catalog-es migrate` after the event store's."""

from catalog_es.store.migrations import Migration, packaged_sql

READ_MODEL_MIGRATIONS = (
    Migration("0101_catalog_read_model", packaged_sql("projections.catalog", "read_model.sql")),
    Migration("0102_views_read_model", packaged_sql("projections.catalog", "views_read_model.sql")),
    Migration("0103_management_read_model", packaged_sql("projections.catalog", "management_read_model.sql")),
    Migration("0104_deleted_read_model", packaged_sql("projections.catalog", "deleted_read_model.sql")),
    Migration("0105_warehouse_rebase_mode", packaged_sql("projections.catalog", "warehouse_rebase_mode.sql")),
    Migration("0106_warehouse_scan_planning", packaged_sql("projections.catalog", "warehouse_scan_planning.sql")),
    Migration("0107_table_document_entries", packaged_sql("projections.catalog", "table_document_entries.sql")),
)
