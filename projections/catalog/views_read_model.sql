-- The views read model (inline, rebuilt from the log alone); its own step so existing databases get it.
CREATE TABLE IF NOT EXISTS views (
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
