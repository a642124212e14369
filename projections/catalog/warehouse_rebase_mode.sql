-- A warehouse's own server-side rebase mode (issue 19): 'off', 'opt-in', 'on', or NULL for the server's setting.
-- A warehouse held after a forced deletion keeps it (projections/catalog/lifecycle.py moves the row whole).
ALTER TABLE warehouses ADD COLUMN IF NOT EXISTS server_side_rebase text;
ALTER TABLE deleted_warehouses ADD COLUMN IF NOT EXISTS server_side_rebase text;
