-- A warehouse's own scan-planning mode (issue 33): 'client', 'server', or NULL for the server's setting.
-- A warehouse held after a forced deletion keeps it (projections/catalog/lifecycle.py moves the row whole).
ALTER TABLE warehouses ADD COLUMN IF NOT EXISTS scan_planning text;
ALTER TABLE deleted_warehouses ADD COLUMN IF NOT EXISTS scan_planning text;
