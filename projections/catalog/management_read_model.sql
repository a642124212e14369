-- Management read models: bootstrap state, warehouse status, delete profile and credential reference.
CREATE TABLE IF NOT EXISTS server_info (
    id uuid PRIMARY KEY,
    is_operator boolean NOT NULL
);

ALTER TABLE warehouses
    ADD COLUMN IF NOT EXISTS status text NOT NULL DEFAULT 'active',
    ADD COLUMN IF NOT EXISTS delete_profile jsonb NOT NULL DEFAULT '{"type": "hard"}',
    ADD COLUMN IF NOT EXISTS storage_credential_id uuid,
    ADD COLUMN IF NOT EXISTS storage_credential_fingerprint text,
    ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1;

ALTER TABLE projects ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1;
