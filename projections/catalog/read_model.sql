-- Inline read models: written in the append transaction, rebuilt from the log alone.
CREATE TABLE IF NOT EXISTS projects (
    id uuid PRIMARY KEY,
    name text NOT NULL
);

CREATE TABLE IF NOT EXISTS warehouses (
    id uuid PRIMARY KEY,
    project_id uuid NOT NULL,
    name text NOT NULL,
    name_key text NOT NULL,
    location text NOT NULL,
    storage_profile jsonb NOT NULL,
    UNIQUE (project_id, name_key)
);

CREATE TABLE IF NOT EXISTS namespaces (
    id uuid PRIMARY KEY,
    warehouse_id uuid NOT NULL,
    parts text[] NOT NULL,
    key text NOT NULL,
    parent_key text NOT NULL,
    properties jsonb NOT NULL,
    version integer NOT NULL,
    UNIQUE (warehouse_id, key)
);
CREATE INDEX IF NOT EXISTS namespaces_children ON namespaces (warehouse_id, parent_key, key);

CREATE TABLE IF NOT EXISTS tables (
    id uuid PRIMARY KEY,
    warehouse_id uuid NOT NULL,
    namespace_id uuid NOT NULL,
    name text NOT NULL,
    name_key text NOT NULL,
    location text NOT NULL,
    metadata_location text NOT NULL,
    metadata jsonb NOT NULL,
    version integer NOT NULL,
    UNIQUE (namespace_id, name_key)
);
CREATE INDEX IF NOT EXISTS tables_location ON tables (warehouse_id, location text_pattern_ops);
