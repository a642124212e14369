-- Soft-deleted tables, views and namespaces (inline, rebuilt from the log alone): hidden from every live
-- relation, kept here whole until undropped or expired.
CREATE TABLE IF NOT EXISTS deleted_tabulars (
    id uuid PRIMARY KEY,
    kind text NOT NULL,
    warehouse_id uuid NOT NULL,
    namespace_id uuid NOT NULL,
    name text NOT NULL,
    name_key text NOT NULL,
    location text NOT NULL,
    metadata_location text NOT NULL,
    metadata jsonb NOT NULL,
    version integer NOT NULL,
    deleted_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    purge_requested boolean NOT NULL,
    actor text,
    with_namespace uuid,
    expiration_task_id uuid
);
CREATE INDEX IF NOT EXISTS deleted_tabulars_listing ON deleted_tabulars (warehouse_id, deleted_at, id);

CREATE TABLE IF NOT EXISTS deleted_namespaces (
    id uuid PRIMARY KEY,
    warehouse_id uuid NOT NULL,
    parts text[] NOT NULL,
    key text NOT NULL,
    parent_key text NOT NULL,
    properties jsonb NOT NULL,
    version integer NOT NULL,
    deleted_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    actor text,
    with_namespace uuid,
    expiration_task_id uuid
);

-- Warehouses deleted with `force` within the hold period (CATALOG_ES__WAREHOUSE_DELETE_HOLD_SECONDS): the row
-- as it was; their namespaces, tables and views stay where they are, unreachable without the warehouse.
CREATE TABLE IF NOT EXISTS deleted_warehouses (
    id uuid PRIMARY KEY,
    project_id uuid NOT NULL,
    name text NOT NULL,
    name_key text NOT NULL,
    location text NOT NULL,
    storage_profile jsonb NOT NULL,
    status text NOT NULL,
    delete_profile jsonb NOT NULL,
    storage_credential_id uuid,
    storage_credential_fingerprint text,
    version integer NOT NULL,
    deleted_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    actor text,
    expiration_task_id uuid
);
